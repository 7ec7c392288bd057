// Reading clusters[].organizations of the webhooks' configuration file: every problem names the
// setting (through `fail`, which throws the configuration loader's ConfigError).
import type { OrganizationSettings } from './settings.ts';


type Fail = (path: string, problem: string) => never;

const LISTS = ['privileged', 'allowedLabels', 'allowedAnnotations', 'reservedNames'] as const;
const COUNTS = ['defaultNamespaceQuota', 'reservationSeconds', 'podActiveDeadlineSeconds'] as const;
const KNOWN = new Set<string>(['enabled', ...LISTS, ...COUNTS]);

export function readOrganizationSettings(raw: Record<string, unknown> | undefined, at: string, fail: Fail): Partial<OrganizationSettings> | undefined {
  if (raw === undefined) return undefined;
  const out: Partial<OrganizationSettings> = {};
  for (const key of Object.keys(raw)) if (!KNOWN.has(key)) fail(`${at}.${key}`, `unknown setting (expected one of ${[...KNOWN].join(', ')})`);
  if (raw.enabled !== undefined) {
    if (typeof raw.enabled !== 'boolean') fail(`${at}.enabled`, `must be true or false, got ${JSON.stringify(raw.enabled)}`);
    out.enabled = raw.enabled;
  }
  for (const key of LISTS) {
    const v = raw[key];
    if (v === undefined) continue;
    if (!Array.isArray(v) || !v.every((s) => typeof s === 'string' && s !== '')) fail(`${at}.${key}`, 'must be a list of non-empty strings');
    out[key] = v as string[];
  }
  for (const key of COUNTS) {
    const v = raw[key];
    if (v === undefined) continue;
    const min = key === 'defaultNamespaceQuota' ? 0 : 1;
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < min) fail(`${at}.${key}`, `must be an integer of at least ${min}, got ${typeof v === 'number' ? String(v) : JSON.stringify(v)}`);
    out[key] = v as number;
  }
  return out;
}

