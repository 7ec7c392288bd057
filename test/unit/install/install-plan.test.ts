// The decisions of `furnish install`: write and removal order, failure policies per phase, the
// relay image by digest, infra/ read without kubectl, and the probes' verdicts.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { fillTemplates, INFRA, loadKustomization } from '../../../shared/install/manifests.ts';
import { failClosedConfigurations, failurePolicies, imageReferenceProblem, uninstallOrder, withFailurePolicy } from '../../../shared/install/plan.ts';
import { PROBES, unprobed } from '../../../shared/install/probes.ts';
import { clusterObjects } from '../../../shared/install/install.ts';
import { defaultTopicVars } from '../../../shared/install/vars.ts';
import { webhookRegistrations } from '../../../shared/webhooks/registration.ts';
import { WEBHOOKS } from '../../../shared/config/types.ts';
import { runCli } from '../../../shared/cli/command.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';
import { describeWithTool } from '../../support/tools.ts';

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

  it('probes every webhook it lets fail closed; protect-objects, not probed yet, stays Ignore', () => {
    expect(unprobed(WEBHOOKS)).toEqual(['mutate-pod', 'protect-objects']);
    expect(PROBES.map((p) => p.webhook).sort()).toEqual(WEBHOOKS.filter((w) => w !== 'mutate-pod' && w !== 'protect-objects').sort());
    const skipped = unprobed(WEBHOOKS);
    const switched = failClosedConfigurations(registrations, (w) => !skipped.includes(w)).map((c) => c.metadata.name);
    expect(switched).not.toContain('furnish-protect-objects');
    expect(switched).toHaveLength(WEBHOOKS.length - 2);
  });
});

describe('the probes\' verdicts', () => {
  const probe = (webhook: string) => PROBES.find((p) => p.webhook === webhook)!;

  it('a mutating webhook passes only with its mark on the admitted object', () => {
    const judge = probe('mutate-namespace').judge;
    expect(judge({ status: 201, data: { metadata: { annotations: { 'furnish.dev/creator': 'admin' } } } })).toBeUndefined();
    expect(judge({ status: 201, data: { metadata: {} } })).toContain('expected the dry run admitted with annotation furnish.dev/creator set, got admitted (HTTP 201)');
  });

  it('a validating webhook passes only with its own refusal', () => {
    const judge = probe('validate-template').judge;
    expect(judge({ status: 422, error: 'admission webhook "validate-template.furnish.dev" denied the request: NamespaceTemplate "x" is invalid' })).toBeUndefined();
    expect(judge({ status: 201 })).toContain('expected the dry run refused by validate-template.furnish.dev, got admitted (HTTP 201)');
    expect(judge({ status: 403, error: 'admission webhook "validate-namespace.furnish.dev" denied the request' })).toContain('got HTTP 403');
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

  it('refuses a timeout that is not a whole number of seconds', async () => {
    const r = await cli([...base, '--relay-image', DIGEST, '--timeout', '1.5', '--kubeconfig', '/nonexistent']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--timeout: a whole number of seconds|--kubeconfig/);
  });
});
