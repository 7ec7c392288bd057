// What `furnish install` and `furnish uninstall` print while they work: one human-readable line per
// step by default, or with `-o json` one JSON object per line (log.ts's shape) for a program to read.
import { jsonLogger, type Logger, type Severity } from '../log.ts';

export const PROGRESS_FORMATS = ['text', 'json'] as const;
export type ProgressFormat = (typeof PROGRESS_FORMATS)[number];

const PREFIX: Record<Severity, string> = { DEBUG: '', INFO: '', WARNING: 'warning: ', ERROR: 'error: ' };

const valueText = (v: unknown): string => (Array.isArray(v) ? v.map(valueText).join(', ') : typeof v === 'string' ? v : JSON.stringify(v));

/** `applied Deployment furnish-system/furnish-relay`, `function reachable: mutate-namespace (url https://…)`. */
export function progressLine(severity: Severity, message: string, fields: Record<string, unknown> = {}): string {
  const { kind, name, namespace, function: fn, ...rest } = fields;
  const object = typeof kind === 'string' && typeof name === 'string' ? ` ${kind} ${typeof namespace === 'string' ? `${namespace}/` : ''}${name}` : '';
  const subject = typeof fn === 'string' ? `: ${fn}` : '';
  const extra = Object.entries(rest).map(([k, v]) => `${k} ${valueText(v)}`);
  return `${PREFIX[severity]}${message}${object}${subject}${extra.length > 0 ? ` (${extra.join('; ')})` : ''}\n`;
}

export function progressLogger(format: ProgressFormat, write: (line: string) => void, component = 'furnish-install'): Logger {
  if (format === 'json') return jsonLogger(component, write);
  return { log: (severity, message, fields) => write(progressLine(severity, message, fields)) };
}
