// The registration in infra/webhooks: each webhook's contract with kube-apiserver.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { WEBHOOKS } from '../../../shared/config/types.ts';

const dir = join(import.meta.dirname, '..', '..', '..', 'infra', 'webhooks');
const text = (name: string) => readFileSync(join(dir, `${name}.yaml`), 'utf8');

interface Webhook {
  name: string;
  admissionReviewVersions: string[];
  sideEffects: string;
  failurePolicy: string;
  timeoutSeconds: number;
  clientConfig: { url: string; caBundle?: string };
  rules: { apiGroups: string[]; resources: string[]; operations: string[]; scope: string }[];
  namespaceSelector: { matchExpressions: { key: string; operator: string; values: string[] }[] };
}

describe('infra/webhooks', () => {
  it('lists the four configurations in its kustomization', () => {
    const k = parse(text('kustomization'));
    for (const w of WEBHOOKS) expect(k.resources).toContain(`${w}.yaml`);
  });

  it.each(WEBHOOKS.map((w) => [w]))('%s: v1 reviews, no side effects, a reasoned failurePolicy and timeout, kube-system and furnish-system excluded', (name) => {
    const source = text(name);
    const config = parse(source);
    expect(config.kind).toBe(name.startsWith('mutate') ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration');
    const [hook] = config.webhooks as Webhook[];
    expect(hook).toMatchObject({ admissionReviewVersions: ['v1'], sideEffects: 'None', failurePolicy: 'Fail', clientConfig: { url: `\${FURNISH_FUNCTIONS_URL}/${name}` } });
    expect(hook!.timeoutSeconds).toBeGreaterThanOrEqual(1);
    expect(hook!.timeoutSeconds).toBeLessThanOrEqual(10);
    for (const field of ['failurePolicy', 'timeoutSeconds']) {
      const lines = source.split('\n');
      const at = lines.findIndex((l) => l.trim().startsWith(`${field}:`));
      expect(lines[at - 1]!.trim()).toMatch(/^#/); // the reason, right above
    }
    expect(hook!.namespaceSelector.matchExpressions).toContainEqual({ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system', 'furnish-system'] });
  });

  it('rules are no wider than needed', () => {
    const rules = (name: string) => (parse(text(name)).webhooks[0] as Webhook).rules;
    expect(rules('mutate-namespace')).toEqual([{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces'], operations: ['CREATE', 'UPDATE'], scope: 'Cluster' }]);
    expect(rules('validate-namespace')).toEqual(rules('mutate-namespace'));
    expect(rules('validate-template')).toEqual([{ apiGroups: ['furnish.dev'], apiVersions: ['v1alpha1'], resources: ['namespacetemplates'], operations: ['CREATE', 'UPDATE'], scope: 'Cluster' }]);
    const guard = parse(text('guard-initializing')).webhooks[0] as Webhook;
    expect(guard.rules).toEqual([{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: 'Namespaced' }]);
    expect(guard.namespaceSelector.matchExpressions).toContainEqual({ key: 'furnish.dev/phase', operator: 'In', values: ['pending', 'failed'] });
  });
});
