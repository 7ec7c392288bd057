// docs/operate/enforcement.md stays complete: its tables (hand-written) name every in-tree policy
// Furnish renders (organizations on, so all of them) and every webhook, each in the "enforced by"
// column of some row. What the rows say is checked by test/e2e/functions-down.test.ts.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultPolicySettings, WEBHOOKS } from '../../../shared/config/types.ts';
import { admissionPolicies } from '../../../shared/policies/index.ts';

const PAGE = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'operate', 'enforcement.md'), 'utf8');

/** The names in backticks in the second column ("enforced by") of every table row. */
function enforcers(page: string): Set<string> {
  const cells = page.split('\n').filter((l) => l.startsWith('| ') && !l.startsWith('| rule |')).map((l) => l.split(' | ')[1] ?? '');
  return new Set(cells.flatMap((c) => [...c.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]!)));
}

describe('docs/operate/enforcement.md', () => {
  const named = enforcers(PAGE);

  it('names every in-tree policy as enforcing a rule', () => {
    const policies = admissionPolicies({ ...defaultPolicySettings(), organizations: { enabled: true } })
      .filter((o) => o.kind === 'ValidatingAdmissionPolicy').map((o) => o.metadata.name!);
    expect(policies.length).toBeGreaterThan(0);
    expect(policies.filter((p) => !named.has(p))).toEqual([]);
  });

  it('names every webhook as enforcing a rule', () => {
    expect(WEBHOOKS.filter((w) => !named.has(w))).toEqual([]);
  });
});
