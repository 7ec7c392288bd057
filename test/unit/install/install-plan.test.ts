// The decisions of `furnish install`: write and removal order, failure policies per phase, the
// relay image by digest, infra/ read without kubectl, and the probes' requests and verdicts.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { fillTemplates, INFRA, loadKustomization } from '../../../shared/install/manifests.ts';
import { failClosedConfigurations, failurePolicies, functionOf, imageReferenceProblem, uninstallOrder, withFailurePolicy } from '../../../shared/install/plan.ts';
import { isProbed, PROBES, unprobed, type ProbeNames } from '../../../shared/install/probes.ts';
import { FIELD_MANAGER, KEY } from '../../../shared/keys.ts';
import { applySetId } from '../../../shared/render/applyset.ts';
import { matchesSelector, parseSelector } from '../../../shared/render/selector.ts';
import { protectFirstStep } from '../../../shared/webhooks/rules/protect-objects.ts';
import { clusterObjects } from '../../../shared/install/install.ts';
import { defaultTopicVars } from '../../../shared/install/vars.ts';
import { webhookRegistrations } from '../../../shared/webhooks/registration.ts';
import { WEBHOOKS } from '../../../shared/config/types.ts';
import { runCli } from '../../../shared/cli/command.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';
import { describeWithTool } from '../../support/tools.ts';
import { testSettings } from '../../support/fixtures.ts';

const DIGEST = `europe-docker.pkg.dev/p/furnish/relay@sha256:${'0f'.repeat(32)}`;
const registrations = webhookRegistrations({ functionsUrl: 'https://functions.example' }) as KubeObject[];
const vars = { ...defaultTopicVars(), FURNISH_RELAY_IMAGE: DIGEST, FURNISH_CLUSTER_ID: 'prod', FURNISH_PROJECT: 'p', FURNISH_RELAY_SERVICE_ACCOUNT: 'furnish-relay@p.iam.gserviceaccount.com' };
const kindOf = (o: KubeObject) => o.kind;

describe('the relay image', () => {
  it('is accepted by digest, with or without a tag before it', () => {
    expect(imageReferenceProblem(DIGEST)).toBeUndefined();
    expect(imageReferenceProblem(`registry.example:5000/furnish-relay:1.2.3@sha256:${'a'.repeat(64)}`)).toBeUndefined();
  });

  it('is refused by tag, saying to give the digest', () => {
    expect(imageReferenceProblem('registry.example/furnish-relay:latest')).toContain('names the image by tag; give it by digest');
    expect(imageReferenceProblem('furnish-relay')).toContain('by tag');
  });

  it('is refused with a malformed digest', () => {
    expect(imageReferenceProblem('registry.example/furnish-relay@sha256:abc')).toContain('not a valid image reference by digest');
    expect(imageReferenceProblem(`registry.example/furnish-relay@sha256:${'A'.repeat(64)}`)).toContain('not a valid image reference by digest');
  });
});

describe('order', () => {
  const objects = clusterObjects(vars);

  it('writes the namespace first, then CRDs, identities, roles and bindings, workloads last, and no registration', () => {
    const kinds = objects.map(kindOf);
    expect(kinds[0]).toBe('Namespace');
    expect(kinds.lastIndexOf('CustomResourceDefinition')).toBeLessThan(kinds.indexOf('ServiceAccount'));
    expect(kinds.lastIndexOf('ClusterRole')).toBeLessThan(kinds.indexOf('ClusterRoleBinding'));
    expect(kinds.at(-1)).toBe('Deployment');
    expect(kinds.filter((k) => k.endsWith('WebhookConfiguration'))).toEqual([]);
  });

  it('removes every registration before anything else, keeps the CRDs unless asked, the namespace last', () => {
    const removal = uninstallOrder([...registrations, ...objects], { crds: false });
    expect(removal.slice(0, registrations.length).every((o) => o.kind.endsWith('WebhookConfiguration'))).toBe(true);
    expect(removal.map(kindOf)).not.toContain('CustomResourceDefinition');
    expect(removal.at(-1)?.kind).toBe('Namespace');
    expect(uninstallOrder([...registrations, ...objects], { crds: true }).filter((o) => o.kind === 'CustomResourceDefinition')).toHaveLength(4);
  });

  it('fills the relay\'s variables, and names a variable without a value with where it is', () => {
    const relay = objects.find((o) => o.kind === 'Deployment')!;
    expect(JSON.stringify(relay)).toContain(DIGEST);
    expect(JSON.stringify(objects)).not.toMatch(/\$\{FURNISH_/);
    expect(() => clusterObjects({ ...vars, FURNISH_PROJECT: undefined as unknown as string })).toThrow(/Deployment\/furnish-relay: spec\.template\.spec\.containers\[0\]\.env\[2\]\.value: template variable \$\{FURNISH_PROJECT\} has no value/);
    expect(fillTemplates({ a: ['x-${B}'] }, { B: 'y' })).toEqual({ a: ['x-y'] });
  });
});

describe('failure policies', () => {
  it('registers every webhook Ignore first', () => {
    expect(new Set(Object.values(failurePolicies(registrations.map((c) => withFailurePolicy(c, 'Ignore')))))).toEqual(new Set(['Ignore']));
  });

  it('switches to the manifest\'s policy only the configurations that fail closed (mutate-pod stays Ignore)', () => {
    const switched = failClosedConfigurations(registrations).map((c) => c.metadata.name);
    expect(switched).not.toContain('furnish-mutate-pod');
    expect(switched).toHaveLength(WEBHOOKS.length - 1);
    expect(failurePolicies(registrations)['mutate-pod.furnish.dev']).toBe('Ignore');
  });

  it('probes every webhook it lets fail closed; protect-scale and mutate-pod have none, and say why', () => {
    const names = Object.keys(failurePolicies(registrations)).map(functionOf);
    expect(unprobed(names).map((u) => u.webhook)).toEqual(['mutate-pod', 'protect-scale']);
    expect(unprobed(['protect-scale'])[0]!.why).toContain('a dry run cannot reach');
    expect(unprobed(['some-new-webhook'])).toEqual([{ webhook: 'some-new-webhook', why: 'no probe checks it yet' }]);
    expect(PROBES.map((p) => p.webhook).sort()).toEqual(names.filter((w) => w !== 'mutate-pod' && w !== 'protect-scale').sort());
  });

  it('switches per webhook: the probed ones of furnish-protect-objects fail closed, unprobed protect-scale stays Ignore', () => {
    const switched = failClosedConfigurations(registrations, isProbed);
    expect(switched.map((c) => c.metadata.name)).toContain('furnish-protect-objects');
    expect(switched.map((c) => c.metadata.name)).not.toContain('furnish-mutate-pod');
    expect(failurePolicies(switched)).toMatchObject({ 'protect-objects.furnish.dev': 'Fail', 'protect-applyset.furnish.dev': 'Fail', 'protect-scale.furnish.dev': 'Ignore' });
    // Every other webhook of every configuration as its manifest says.
    const manifest = failurePolicies(registrations);
    for (const [webhook, policy] of Object.entries(failurePolicies(switched))) if (webhook !== 'protect-scale.furnish.dev') expect([webhook, policy]).toEqual([webhook, manifest[webhook]]);
  });

  it('leaves a configuration none of whose webhooks was probed out of the switch', () => {
    expect(failClosedConfigurations(registrations, () => false)).toEqual([]);
    expect(failClosedConfigurations(registrations, (w) => w === 'protect-scale').map((c) => c.metadata.name)).toEqual(['furnish-protect-objects']);
    expect(failurePolicies(failClosedConfigurations(registrations, (w) => w === 'protect-scale'))).toEqual({
      'protect-objects.furnish.dev': 'Ignore', 'protect-applyset.furnish.dev': 'Ignore', 'protect-scale.furnish.dev': 'Fail',
    });
  });
});

describe('the probes\' verdicts', () => {
  const probe = (webhook: string) => PROBES.find((p) => p.webhook === webhook)!;

  it('a mutating webhook passes only with its mark on the admitted object', () => {
    const judge = probe('mutate-namespace').judge;
    expect(judge({ status: 201, data: { metadata: { annotations: { 'furnish.dev/creator': 'admin' } } } })).toBeUndefined();
    expect(judge({ status: 201, data: { metadata: {} } })).toContain('expected the dry run admitted with annotation furnish.dev/creator set, got admitted without its answer (HTTP 201)');
  });

  it('a validating webhook passes only with its own refusal', () => {
    const judge = probe('validate-template').judge;
    expect(judge({ status: 422, error: 'admission webhook "validate-template.furnish.dev" denied the request: NamespaceTemplate "x" is invalid' })).toBeUndefined();
    expect(judge({ status: 201 })).toContain('expected the dry run refused by validate-template.furnish.dev, got admitted without its answer (HTTP 201)');
    expect(judge({ status: 403, error: 'admission webhook "validate-namespace.furnish.dev" denied the request' })).toContain('got HTTP 403');
  });
});

describe('the protect-objects probes', () => {
  const probe = (webhook: string) => PROBES.find((p) => p.webhook === webhook)!;
  const names: ProbeNames = { dryRun: 'install-dry-run-x', pendingNamespace: 'install-probe-x', furnishNamespace: 'furnish-system' };
  const INSTALLER = { username: 'admin', groups: ['system:masters', 'system:authenticated'] };
  const config = registrations.find((c) => c.metadata.name === 'furnish-protect-objects') as KubeObject & { webhooks: { name: string; objectSelector?: unknown }[] };
  /** Which webhooks of furnish-protect-objects select this object by its labels (protect-scale has no objectSelector, and sees only /scale). */
  const selectedBy = (o: KubeObject) => config.webhooks.filter((w) => w.objectSelector !== undefined).filter((w) => {
    const parsed = parseSelector(w.objectSelector);
    return parsed.ok && matchesSelector(parsed.selector, o.metadata.labels ?? {});
  }).map((w) => w.name);

  it('each is seen by its own webhook alone', () => {
    expect(selectedBy(probe('protect-objects').object(names))).toEqual(['protect-objects.furnish.dev']);
    expect(selectedBy(probe('protect-applyset').object(names))).toEqual(['protect-applyset.furnish.dev']);
  });

  it('protect-objects: the installer making a ConfigMap Furnish\'s (field manager furnish) is what the rule refuses', () => {
    const p = probe('protect-objects');
    expect(p.fieldManager).toBe(FIELD_MANAGER);
    const object = p.object(names);
    expect(object.metadata.labels).toEqual({ [KEY.applySetPartOf]: applySetId('furnish-system') });
    // As kube-apiserver hands it to admission: managedFields already name the request's field manager.
    const asSent = { ...object, metadata: { ...object.metadata, managedFields: [{ manager: FIELD_MANAGER, operation: 'Update', time: '2026-11-27T06:00:00Z', fieldsV1: { 'f:metadata': { 'f:labels': { [`f:${KEY.applySetPartOf}`]: {} } } } }] } };
    const input = { operation: 'CREATE' as const, user: INSTALLER, object: asSent, oldObject: null, kind: 'ConfigMap', name: object.metadata.name, namespace: 'furnish-system', fieldManager: FIELD_MANAGER, settings: testSettings() };
    expect(protectFirstStep(input)).toMatchObject({ rule: 'protect-ownership' });
  });

  it('protect-applyset: the installer creating ConfigMap furnish-applyset is what the rule refuses', () => {
    const object = probe('protect-applyset').object(names);
    expect(object.metadata).toMatchObject({ name: 'furnish-applyset', namespace: 'furnish-system', labels: { [KEY.applySetId]: applySetId('furnish-system') } });
    const input = { operation: 'CREATE' as const, user: INSTALLER, object, oldObject: null, kind: 'ConfigMap', name: object.metadata.name, namespace: 'furnish-system', settings: testSettings() };
    expect(protectFirstStep(input)).toMatchObject({ rule: 'protect-applyset-parent' });
  });

  it('each passes only with its own webhook\'s refusal', () => {
    const objects = probe('protect-objects').judge;
    const applyset = probe('protect-applyset').judge;
    const refusal = (w: string) => ({ status: 400, error: `admission webhook "${w}.furnish.dev" denied the request: user "admin" may not create ConfigMap` });
    expect(objects(refusal('protect-objects'))).toBeUndefined();
    expect(applyset(refusal('protect-applyset'))).toBeUndefined();
    // The function down under Ignore: admitted.
    expect(objects({ status: 201, data: {} })).toBe('protect-objects: expected the dry run refused by protect-objects.furnish.dev, got admitted without its answer (HTTP 201): the cluster\'s call to the function failed, or it answered otherwise');
    expect(applyset({ status: 201, data: {} })).toBe('protect-applyset: expected the dry run refused by protect-applyset.furnish.dev, got admitted without its answer (HTTP 201): the cluster\'s call to the function failed, or it answered otherwise');
    // Another webhook's refusal, or the API server's own, is not this function answering.
    expect(objects(refusal('protect-applyset'))).toContain('got HTTP 400');
    expect(applyset({ status: 409, error: 'configmaps "furnish-applyset" already exists' })).toContain('got HTTP 409: configmaps "furnish-applyset" already exists');
  });
});

describeWithTool('kubectl', 'compares the installer\'s reading of infra/ with kubectl kustomize')('infra/ without kubectl', () => {
  it('reads the same objects as `kubectl kustomize infra`', () => {
    const rendered = parseAllDocuments(execFileSync('kubectl', ['kustomize', INFRA], { encoding: 'utf8' })).map((d) => d.toJS() as KubeObject);
    const key = (o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    const ours = new Map(loadKustomization().map((o) => [key(o), o]));
    expect([...ours.keys()].sort()).toEqual(rendered.map(key).sort());
    for (const o of rendered) expect(ours.get(key(o))?.metadata.labels ?? {}).toEqual(o.metadata.labels ?? {});
  });
});

describe('furnish install (arguments)', () => {
  const cli = async (args: string[]) => {
    let stderr = '';
    const code = await runCli(COMMANDS, args, { stdout: () => {}, stderr: (t) => (stderr += t), env: process.env, readStdin: () => '' });
    return { code, stderr };
  };
  const base = ['install', '--url', 'https://functions.example', '--cluster', 'prod', '--project', 'p'];

  it('refuses a relay image by tag before touching any cluster', async () => {
    const r = await cli([...base, '--relay-image', 'registry.example/furnish-relay:latest', '--kubeconfig', '/nonexistent']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('furnish install: --relay-image: "registry.example/furnish-relay:latest" names the image by tag');
  });

  it('refuses a timeout that is not a whole number of seconds before touching any cluster', async () => {
    const r = await cli([...base, '--relay-image', DIGEST, '--timeout', '1.5', '--kubeconfig', '/nonexistent']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--timeout: a whole number of seconds, at least 1, got "1.5"');
  });

  it('fails (1, not a usage error) when the cluster cannot be reached', async () => {
    const r = await cli([...base, '--relay-image', DIGEST, '--kubeconfig', '/nonexistent']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--kubeconfig/--context');
  });
});
