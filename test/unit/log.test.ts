// The structured log line Cloud Logging parses: its own keys cannot be replaced by a field (a
// denial's text once replaced `message: "admission decision"`, which log-based metrics filter on).
import { describe, expect, it } from '@jest/globals';
import { jsonLogger } from '../../shared/log.ts';

describe('jsonLogger', () => {
  it('writes one JSON line with severity, component and message; fields beside them never replace them', () => {
    const lines: string[] = [];
    const log = jsonLogger('validate-namespace', (l) => lines.push(l));
    log.log('INFO', 'admission decision', { allowed: false, message: 'a field', severity: 'DEBUG', component: 'x', denial: 'user "bob" may not' });
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(lines[0]!)).toMatchObject({ severity: 'INFO', component: 'validate-namespace', message: 'admission decision', allowed: false, denial: 'user "bob" may not' });
  });

  it('drops lines below its least severity', () => {
    const lines: string[] = [];
    const log = jsonLogger('c', (l) => lines.push(l), 'WARNING');
    log.log('INFO', 'quiet');
    log.log('ERROR', 'loud');
    expect(lines.map((l) => (JSON.parse(l) as { message: string }).message)).toEqual(['loud']);
  });
});
