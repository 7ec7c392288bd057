// How a failed `furnish install` undoes itself (plan.ts undoSteps, pure), how it prints its
// progress (text lines, or JSON lines with -o json), and its command line: every missing value
// said at once, exit 2.
import { describe, expect, it } from '@jest/globals';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { restorable, undoSteps, type Prior } from '../../../shared/install/plan.ts';
import { progressLine, progressLogger } from '../../../shared/install/progress.ts';
import { clusterObjects } from '../../../shared/install/install.ts';
import { defaultTopicVars } from '../../../shared/install/vars.ts';
import { webhookRegistrations } from '../../../shared/webhooks/registration.ts';
import { runCli } from '../../../shared/cli/command.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';

const DIGEST = `europe-docker.pkg.dev/p/furnish/relay@sha256:${'0f'.repeat(32)}`;
const vars = { ...defaultTopicVars(), FURNISH_RELAY_IMAGE: DIGEST, FURNISH_CLUSTER_ID: 'prod', FURNISH_PROJECT: 'p', FURNISH_RELAY_SERVICE_ACCOUNT: 'furnish-relay@p.iam.gserviceaccount.com' };
const registrationsAt = (url: string) => webhookRegistrations({ functionsUrl: url }) as KubeObject[];
const objects = clusterObjects(vars);
const shown = (o: KubeObject) => `${o.kind}/${o.metadata.name}`;

/** As the API server returns an object: with the fields it sets. */
const live = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, uid: 'u-1', resourceVersion: '42', generation: 3, creationTimestamp: '2026-01-01T00:00:00Z', managedFields: [{ manager: 'furnish-install' }] }, status: { observed: true } } as KubeObject);

describe('undoSteps: what a failed install takes back', () => {
  it('a failed first install deletes everything it wrote, registrations first, but the identities it created (their namespace and ServiceAccounts)', () => {
    const registrations = registrationsAt('https://new.example');
    const steps = undoSteps([...registrations, ...objects].map((object) => ({ object })), new Set());
    // A cluster whose functions use a ServiceAccount token gets it minted after a first install whose probes fail without it.
    const kept = steps.filter((s) => s.action === 'keep').map((s) => shown(s.object));
    expect(kept).toEqual(expect.arrayContaining(['Namespace/furnish-system', 'ServiceAccount/furnish-webhook', 'ServiceAccount/furnish-reconciler']));
    expect(kept.every((k) => k.startsWith('ServiceAccount/') || k === 'Namespace/furnish-system')).toBe(true);
    expect(steps.filter((s) => s.action !== 'keep').every((s) => s.action === 'delete')).toBe(true);
    expect(steps.slice(0, registrations.length).every((s) => s.object.kind.endsWith('WebhookConfiguration'))).toBe(true);
    expect(steps.filter((s) => s.action === 'delete').map((s) => shown(s.object))).toEqual(expect.arrayContaining(['Deployment/furnish-relay', 'CustomResourceDefinition/namespacetemplates.furnish.dev', 'ClusterRoleBinding/furnish-webhook']));
    expect(steps).toHaveLength(registrations.length + objects.length);
  });

  it('a failed upgrade writes back what existed before as it was, and deletes only what it added', () => {
    const relay = objects.find((o) => o.kind === 'Deployment')!;
    const oldRelay = { ...relay, spec: { replicas: 1, image: 'the previous one' } } as KubeObject;
    const priors: Prior[] = objects.map((object) => ({ object, before: object === relay ? live(oldRelay) : object.kind === 'Namespace' ? live(object) : undefined }));
    const steps = undoSteps(priors, new Set());
    const restored = steps.filter((s) => s.action === 'restore');
    expect(restored.map((s) => shown(s.object))).toEqual(['Deployment/furnish-relay', 'Namespace/furnish-system']);
    expect(restored[0]!.object).toEqual(restorable(live(oldRelay)));
    expect((restored[0]!.object as unknown as { spec: unknown }).spec).toEqual({ replicas: 1, image: 'the previous one' });
    const serviceAccounts = objects.filter((o) => o.kind === 'ServiceAccount').length;
    expect(steps.filter((s) => s.action === 'keep')).toHaveLength(serviceAccounts);
    expect(steps.filter((s) => s.action === 'delete')).toHaveLength(objects.length - 2 - serviceAccounts);
  });

  it('previous registrations come back as they were (their URL, Fail) where their function answers, Ignore where it does not', () => {
    const before = registrationsAt('https://old.example');
    const priors = registrationsAt('https://new.example').map((object, i) => ({ object, before: live(before[i]!) }));
    const answering = new Set(['https://old.example/mutate-namespace/healthz']);
    const steps = undoSteps(priors, answering);
    expect(steps.every((s) => s.action === 'restore')).toBe(true);
    const hooks = steps.flatMap((s) => (s.object as unknown as { webhooks: { name: string; failurePolicy: string; clientConfig: { url: string } }[] }).webhooks);
    expect(hooks.every((w) => w.clientConfig.url.startsWith('https://old.example/'))).toBe(true);
    expect(hooks.find((w) => w.name === 'mutate-namespace.furnish.dev')!.failurePolicy).toBe('Fail');
    expect(hooks.find((w) => w.name === 'validate-namespace.furnish.dev')!.failurePolicy).toBe('Ignore');
    // mutate-pod was Ignore before: Ignore, and not reported as downgraded.
    expect(hooks.find((w) => w.name === 'mutate-pod.furnish.dev')!.failurePolicy).toBe('Ignore');
    const downgraded = steps.flatMap((s) => (s.action === 'restore' ? s.downgraded : []));
    expect(downgraded).toContain('validate-namespace.furnish.dev');
    expect(downgraded).not.toContain('mutate-namespace.furnish.dev');
    expect(downgraded).not.toContain('mutate-pod.furnish.dev');
  });

  it('restorable drops what the server sets (identity, version, managed fields, status) and keeps the content', () => {
    const o = objects.find((x) => x.kind === 'ClusterRole')!;
    const r = restorable(live(o));
    expect(r).toEqual(o);
    expect(r).not.toHaveProperty('status');
    expect(Object.keys(r.metadata).sort()).toEqual(['labels', 'name']);
  });
});

describe('progress lines', () => {
  it('reads as text by default', () => {
    expect(progressLine('INFO', 'applied', { kind: 'Deployment', name: 'furnish-relay', namespace: 'furnish-system' })).toBe('applied Deployment furnish-system/furnish-relay\n');
    expect(progressLine('ERROR', 'function unreachable', { function: 'mutate-namespace', layer: 'dns' })).toBe('error: function unreachable: mutate-namespace (layer dns)\n');
    expect(progressLine('WARNING', 'not probed', { webhook: 'protect-scale', registrations: ['a', 'b'] })).toBe('warning: not probed (webhook protect-scale; registrations a, b)\n');
  });

  it('is one JSON object per line with -o json', () => {
    const lines: string[] = [];
    progressLogger('json', (l) => lines.push(l)).log('INFO', 'applied', { kind: 'Namespace', name: 'furnish-system' });
    expect(JSON.parse(lines[0]!)).toMatchObject({ severity: 'INFO', message: 'applied', kind: 'Namespace', name: 'furnish-system', component: 'furnish-install' });
  });
});

describe('furnish install: the command line', () => {
  const cli = async (args: string[], stdin = '') => {
    let stderr = '';
    const code = await runCli(COMMANDS, args, { stdout: () => {}, stderr: (t) => (stderr += t), env: process.env, readStdin: () => stdin });
    return { code, stderr };
  };

  it('names every missing value at once, exit 2', async () => {
    const r = await cli(['install']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('furnish install: missing --url, --cluster, --project, --relay-image (--url, --cluster and --project may come from --vars; see furnish install --help)\n');
  });

  it('takes from --vars what the file gives, and names only what is still missing', async () => {
    const file = JSON.stringify({ ...defaultTopicVars(), FURNISH_FUNCTIONS_URL: 'https://fn.example', FURNISH_CLUSTER_ID: 'prod', FURNISH_PROJECT: 'p' });
    const r = await cli(['install', '--vars', '-'], file);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('furnish install: missing --relay-image (--url, --cluster and --project may come from --vars; see furnish install --help)\n');
  });

  it('refuses an unknown progress format, exit 2', async () => {
    const r = await cli(['install', '-o', 'yaml']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--output: "yaml" is not one of text, json');
  });
});
