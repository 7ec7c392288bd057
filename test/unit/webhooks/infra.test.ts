// The registration in infra/webhooks: each webhook's contract with kube-apiserver.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { runWebhooks } from '../../../shared/cli/webhooks-command.ts';
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
  namespaceSelector?: { matchExpressions: { key: string; operator: string; values: string[] }[] };
  objectSelector?: { matchExpressions: { key: string; operator: string; values?: string[] }[] };
}

describe('infra/webhooks', () => {
  it('lists the four configurations in its kustomization', () => {
    const k = parse(text('kustomization'));
    for (const w of WEBHOOKS) expect(k.resources).toContain(`${w}.yaml`);
  });

  // validate-namespace reserves organization quota (never on dry run); mutate-pod only fills in a default, so fails open.
  const SIDE_EFFECTS: Partial<Record<string, string>> = { 'validate-namespace': 'NoneOnDryRun', 'mutate-lnamespace': 'NoneOnDryRun' };
  const FAILURE_POLICY: Partial<Record<string, string>> = { 'mutate-pod': 'Ignore' };

  it.each(WEBHOOKS.map((w) => [w]))('%s: v1 reviews, declared side effects, a reasoned failurePolicy and timeout, never skipped by a label a requester writes', (name) => {
    const source = text(name);
    const config = parse(source);
    expect(config.kind).toBe(name.startsWith('mutate') ? 'MutatingWebhookConfiguration' : 'ValidatingWebhookConfiguration');
    const [hook] = config.webhooks as Webhook[];
    expect(hook).toMatchObject({ admissionReviewVersions: ['v1'], sideEffects: SIDE_EFFECTS[name] ?? 'None', failurePolicy: FAILURE_POLICY[name] ?? 'Fail', clientConfig: { url: `\${FURNISH_FUNCTIONS_URL}/${name}\${FURNISH_WEBHOOK_CREDENTIAL_PATH}` } });
    expect(hook!.timeoutSeconds).toBeGreaterThanOrEqual(1);
    expect(hook!.timeoutSeconds).toBeLessThanOrEqual(10);
    for (const field of ['failurePolicy', 'timeoutSeconds']) {
      const lines = source.split('\n');
      const at = lines.findIndex((l) => l.trim().startsWith(`${field}:`));
      expect(lines[at - 1]!.trim()).toMatch(/^#/); // the reason, right above
    }
    // A Namespace's own labels feed a namespaceSelector: exemptions are decided by name in the function.
    // Only Furnish's own keys may select, whose changes validate-namespace judges (phase, organization).
    for (const e of hook!.namespaceSelector?.matchExpressions ?? []) expect(['furnish.dev/phase', 'furnish.dev/organization']).toContain(e.key);
  });

  it('rules are no wider than needed', () => {
    const rules = (name: string) => (parse(text(name)).webhooks[0] as Webhook).rules;
    expect(rules('mutate-namespace')).toEqual([{ apiGroups: [''], apiVersions: ['v1'], resources: ['namespaces', 'namespaces/status', 'namespaces/finalize'], operations: ['CREATE', 'UPDATE'], scope: 'Cluster' }]);
    expect(rules('validate-namespace')).toEqual(rules('mutate-namespace'));
    expect(rules('validate-organization')).toEqual([{ apiGroups: ['furnish.dev'], apiVersions: ['v1alpha1'], resources: ['organizations'], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: 'Cluster' }]);
    expect(rules('mutate-pod')).toEqual([{ apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], operations: ['CREATE'], scope: 'Namespaced' }]);
    expect((parse(text('mutate-pod')).webhooks[0] as Webhook).namespaceSelector!.matchExpressions).toContainEqual({ key: 'furnish.dev/organization', operator: 'Exists' });
    expect(rules('validate-template')).toEqual([{ apiGroups: ['furnish.dev'], apiVersions: ['v1alpha1'], resources: ['namespacetemplates', 'namespaceinitializationconfigurations'], operations: ['CREATE', 'UPDATE'], scope: 'Cluster' }]);
    const guard = parse(text('guard-initializing')).webhooks[0] as Webhook;
    // Every namespaced resource, and the subresources that act on a workload or issue a credential (not status: the controllers' and kubelet's).
    expect(guard.rules).toEqual([{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*', 'pods/eviction', 'pods/ephemeralcontainers', 'serviceaccounts/token', '*/scale'], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: 'Namespaced' }]);
    expect(guard.namespaceSelector!.matchExpressions).toContainEqual({ key: 'furnish.dev/phase', operator: 'In', values: ['pending', 'failed'] });
    // protect-objects: every namespaced kind (templates hold any), but only ApplySet members (Furnish's objects among them);
    // its second webhook: ApplySet parents (Furnish's told apart by name and id in the function).
    const [protect, parent, scale] = parse(text('protect-objects')).webhooks as Webhook[];
    expect(protect!.rules).toEqual([
      { apiGroups: ['*'], apiVersions: ['*'], resources: ['*'], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: 'Namespaced' },
      { apiGroups: [''], apiVersions: ['v1'], resources: ['pods/ephemeralcontainers'], operations: ['UPDATE'], scope: 'Namespaced' },
    ]);
    // Its third: the scale subresources (a Scale has no labels, so no objectSelector), in namespaces Furnish governs.
    expect(scale!.rules).toEqual([
      { apiGroups: ['apps'], apiVersions: ['*'], resources: ['deployments/scale', 'replicasets/scale', 'statefulsets/scale'], operations: ['UPDATE'], scope: 'Namespaced' },
      { apiGroups: [''], apiVersions: ['*'], resources: ['replicationcontrollers/scale'], operations: ['UPDATE'], scope: 'Namespaced' },
    ]);
    expect(scale!.objectSelector).toBeUndefined();
    expect(scale!.namespaceSelector).toEqual({ matchExpressions: [{ key: 'furnish.dev/phase', operator: 'Exists' }] });
    expect(scale!.failurePolicy).toBe('Fail');
    expect(protect!.objectSelector).toEqual({ matchExpressions: [{ key: 'applyset.kubernetes.io/part-of', operator: 'Exists' }] });
    expect(protect!.namespaceSelector).toBeUndefined();
    expect(parent!.rules).toEqual([{ apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: 'Namespaced' }]);
    expect(parent!.objectSelector).toEqual({ matchExpressions: [{ key: 'applyset.kubernetes.io/id', operator: 'Exists' }] });
    expect([protect!.failurePolicy, parent!.failurePolicy]).toEqual(['Fail', 'Fail']);
  });
});

describe('furnish webhooks: the registrations for one cluster', () => {
  const credential = 'k'.repeat(48);
  const run = async (args: Record<string, string>, env: Record<string, string> = {}) => {
    let out = '';
    await runWebhooks(args, { stdout: (t) => (out += t), stderr: () => {}, env, readStdin: () => '' });
    return parseAllDocuments(out).map((d) => d.toJS() as { kind: string; webhooks: Webhook[] });
  };

  it('path mode: every URL ends in /c/<cluster>/<credential>, read from the environment', async () => {
    const docs = await run({ url: 'https://europe-west1-p.cloudfunctions.net', cluster: 'gke-prod', 'credential-env': 'CRED' }, { CRED: credential });
    expect(docs.map((d) => d.webhooks[0]!.clientConfig.url)).toEqual(WEBHOOKS.map((w) => `https://europe-west1-p.cloudfunctions.net/${w}/c/gke-prod/${credential}`));
    expect(docs.every((d) => d.webhooks[0]!.clientConfig.caBundle === undefined)).toBe(true);
  });

  it('JWT mode: bare URLs; a bad credential or URL is refused without printing the secret', async () => {
    const docs = await run({ url: 'https://f.example.com/' });
    expect(docs.map((d) => d.webhooks[0]!.clientConfig.url)).toEqual(WEBHOOKS.map((w) => `https://f.example.com/${w}`));
    await expect(run({ url: 'https://f.example.com', cluster: 'c', 'credential-env': 'CRED' }, { CRED: 'short-secret' })).rejects.toThrow(/^--credential-env: CRED must be 32 to 256/);
    await expect(run({ url: 'https://f.example.com', cluster: 'c', 'credential-env': 'CRED' }, { CRED: 'short-secret' })).rejects.not.toThrow(/short-secret/);
    await expect(run({ url: 'http://f.example.com' })).rejects.toThrow(/HTTPS only/);
  });
});
