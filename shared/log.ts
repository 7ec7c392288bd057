// Structured logs: one JSON object per line with `severity` and `message`, the shape Cloud
// Logging parses from a function's stdout. Tests pass a collecting logger instead.

export type Severity = 'DEBUG' | 'INFO' | 'WARNING' | 'ERROR';

export interface Logger {
  log(severity: Severity, message: string, fields?: Record<string, unknown>): void;
}

export function jsonLogger(component: string, write: (line: string) => void = (l) => process.stdout.write(l), minimum: Severity = 'INFO'): Logger {
  const order: Severity[] = ['DEBUG', 'INFO', 'WARNING', 'ERROR'];
  const floor = order.indexOf(minimum);
  return {
    log(severity, message, fields = {}) {
      if (order.indexOf(severity) < floor) return;
      // The line's own keys last: a field named `message` or `severity` never replaces them.
      write(`${JSON.stringify({ ...fields, severity, time: new Date().toISOString(), component, message })}\n`);
    },
  };
}

export const silentLogger: Logger = { log() {} };

export function collectingLogger(): Logger & { lines: { severity: Severity; message: string; fields: Record<string, unknown> }[] } {
  const lines: { severity: Severity; message: string; fields: Record<string, unknown> }[] = [];
  return { lines, log: (severity, message, fields = {}) => lines.push({ severity, message, fields }) };
}
