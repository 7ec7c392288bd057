// The in-tree variant (a server with ValidatingAdmissionPolicies, shared/kube/features.ts): the
// registrations carry shared/policies' matchConditions and mutate-namespace fails open, the install
// keeps it open after its probes, writes the policies after infra/ and removes them (bindings
// first) before infra/ and after the registrations, and replaces only the Furnish policies an
// install wrote. Without in-tree policies, exactly today's registrations.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse, parseAllDocuments } from 'yaml';
import { runCli } from '../../../shared/cli/command.ts';
import { policySettingsSource } from '../../../shared/cli/webhooks-command.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';
import { defaultPolicySettings, WEBHOOKS, type PolicySettings } from '../../../shared/config/types.ts';
import { clusterObjects } from '../../../shared/install/install.ts';
import { INFRA } from '../../../shared/install/manifests.ts';
import { failClosedConfigurations, failurePolicies, installOrder, undoSteps, uninstallOrder } from '../../../shared/install/plan.ts';
import { installedPolicies, PROBE_USER_CONDITION, stalePolicies } from '../../../shared/install/policies.ts';
import { isProbed, PROBE_USER, unprobed } from '../../../shared/install/probes.ts';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { admissionPolicies } from '../../../shared/policies/index.ts';
import { webhookMatchConditions } from '../../../shared/policies/match-conditions.ts';
import { matchConditionsMatch, type PolicyAttributes } from '../../support/kube-sim/policies.ts';
import { FAIL_OPEN_IN_TREE, webhookRegistrations } from '../../../shared/webhooks/registration.ts';

const settings = defaultPolicySettings();
const withOrganizations: PolicySettings = { ...settings, organizations: { enabled: true } };
const URL = 'https://functions.example';
const webhookOnly = webhookRegistrations({ functionsUrl: URL }) as KubeObject[];
const inTree = webhookRegistrations({ functionsUrl: URL, inTree: settings }) as KubeObject[];

interface Hook { name: string; failurePolicy?: string; matchConditions?: { name: string; expression: string }[] }
const hooksOf = (c: KubeObject) => (c as unknown as { webhooks: Hook[] }).webhooks;
const nameOf = (c: KubeObject) => c.metadata.name!.replace(/^furnish-/, '');

describe('webhookRegistrations', () => {
  it('without in-tree policies: infra/webhooks as they are (no matchConditions, the manifests\' failurePolicy)', () => {
    for (const config of webhookOnly) {
      const manifest = parse(readFileSync(join(INFRA, 'webhooks', `${nameOf(config)}.yaml`), 'utf8')) as KubeObject;
      expect(hooksOf(config).map((h) => [h.name, h.failurePolicy, h.matchConditions])).toEqual(hooksOf(manifest).map((h) => [h.name, h.failurePolicy, undefined]));
    }
  });

  it('with them: each webhook of a configuration carries exactly its function\'s matchConditions (all three of protect-objects\')', () => {
    const conditions = webhookMatchConditions(settings);
    expect(Object.keys(conditions).length).toBeGreaterThan(0);
    for (const config of inTree) {
      const want = conditions[nameOf(config) as (typeof WEBHOOKS)[number]];
      for (const hook of hooksOf(config)) expect([hook.name, hook.matchConditions]).toEqual([hook.name, want && want.length > 0 ? want : undefined]);
    }
    expect(hooksOf(inTree.find((c) => c.metadata.name === 'furnish-protect-objects')!)).toHaveLength(3);
  });

  it('renders the settings into them (organizations on changes validate-namespace\'s)', () => {
    const on = webhookRegistrations({ functionsUrl: URL, inTree: withOrganizations }) as KubeObject[];
    expect(JSON.stringify(on)).not.toEqual(JSON.stringify(inTree));
  });

  it('mutate-namespace fails open (the policies hold what it records); every other webhook keeps its manifest\'s failurePolicy', () => {
    expect(FAIL_OPEN_IN_TREE).toEqual(['mutate-namespace']);
    const before = failurePolicies(webhookOnly);
    const after = failurePolicies(inTree);
    expect(after['mutate-namespace.furnish.dev']).toBe('Ignore');
    for (const [hook, policy] of Object.entries(after)) if (hook !== 'mutate-namespace.furnish.dev') expect([hook, policy]).toEqual([hook, before[hook]]);
  });
});

describe('the install, in-tree', () => {
  it('after its probes, lets fail closed every webhook it did before but mutate-namespace, which stays Ignore', () => {
    const closed = failurePolicies(failClosedConfigurations(inTree, isProbed));
    expect(closed['mutate-namespace.furnish.dev']).toBeUndefined(); // not switched: stays as phase one registered it (Ignore)
    expect(failClosedConfigurations(inTree, isProbed).map((c) => c.metadata.name)).not.toContain('furnish-mutate-namespace');
    const before = failurePolicies(failClosedConfigurations(webhookOnly, isProbed));
    expect(Object.keys(before).filter((h) => before[h] === 'Fail' && h !== 'mutate-namespace.furnish.dev').every((h) => closed[h] === 'Fail')).toBe(true);
    // Not an unprobed webhook either: its manifest in this variant says Ignore.
    expect(unprobed(Object.entries(failurePolicies(inTree)).filter(([, p]) => p === 'Fail').map(([h]) => h.replace(/\.furnish\.dev$/, ''))).map((u) => u.webhook)).toEqual(['protect-scale']);
  });

  it('writes the policies after infra/, policies before bindings; removes registrations, then bindings, then policies, then infra/', () => {
    const policies = installedPolicies(settings);
    const order = installOrder([...policies].reverse().concat(clusterObjects())).map((o) => o.kind);
    const first = order.indexOf('ValidatingAdmissionPolicy');
    expect(order.slice(first)).toEqual([...policies.filter((p) => p.kind === 'ValidatingAdmissionPolicy'), ...policies.filter((p) => p.kind !== 'ValidatingAdmissionPolicy')].map((o) => o.kind));
    const removal = uninstallOrder([...clusterObjects(), ...policies, ...inTree], { crds: false }).map((o) => o.kind);
    expect(removal.slice(0, inTree.length).every((k) => k.endsWith('WebhookConfiguration'))).toBe(true);
    const bindings = removal.indexOf('ValidatingAdmissionPolicyBinding');
    expect(bindings).toBe(inTree.length);
    expect(removal.lastIndexOf('ValidatingAdmissionPolicyBinding')).toBeLessThan(removal.indexOf('ValidatingAdmissionPolicy'));
    expect(removal.lastIndexOf('ValidatingAdmissionPolicy')).toBeLessThan(removal.indexOf('Deployment'));
  });

  it('a failed first install deletes the policies it created; a failed upgrade writes back the ones it replaced or removed', () => {
    const policies = installedPolicies(settings);
    const created = undoSteps(policies.map((object) => ({ object })), new Set());
    expect(created.map((s) => s.action)).toEqual(policies.map(() => 'delete'));
    const old = { ...policies[0]!, metadata: { ...policies[0]!.metadata, uid: 'u', resourceVersion: '7', managedFields: [] } } as KubeObject;
    const restored = undoSteps([{ object: policies[0]!, before: old }], new Set());
    expect(restored).toEqual([{ action: 'restore', object: { ...policies[0]!, metadata: policies[0]!.metadata }, downgraded: [] }]);
  });
});

describe('installedPolicies', () => {
  it('are shared/policies\' own, policies then bindings, each policy ending with the probe-user condition', () => {
    const rendered = admissionPolicies(settings);
    const installed = installedPolicies(settings);
    expect(installed.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(rendered.map((o) => `${o.kind}/${o.metadata.name}`));
    for (const [i, o] of installed.entries()) {
      if (o.kind !== 'ValidatingAdmissionPolicy') {
        expect(o).toEqual(rendered[i]);
        continue;
      }
      const conditions = (o as unknown as { spec: { matchConditions: unknown[] } }).spec.matchConditions;
      expect(conditions.at(-1)).toEqual(PROBE_USER_CONDITION);
      expect(conditions.slice(0, -1)).toEqual((rendered[i] as unknown as { spec: { matchConditions?: unknown[] } }).spec.matchConditions ?? []);
    }
  });

  it('leave the probe user\'s dry runs to the webhooks, and nothing else: a write the probe user would store is judged', () => {
    const ns: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } };
    const request = (username: string | undefined, dryRun: boolean): PolicyAttributes => ({
      operation: 'CREATE', userInfo: username === undefined ? {} : { username }, object: ns, oldObject: null, namespaceObject: null,
      resource: { group: '', version: 'v1', resource: 'namespaces' }, name: 'x', kind: { group: '', version: 'v1', kind: 'Namespace' }, dryRun,
    });
    const judged = (a: PolicyAttributes) => matchConditionsMatch([PROBE_USER_CONDITION], a, () => false);
    expect(judged(request(PROBE_USER, true))).toBe(false);
    expect(judged(request(PROBE_USER, false))).toBe(true);
    expect(judged(request('alice', true))).toBe(true);
    expect(judged(request(undefined, true))).toBe(true);
  });
});

describe('stalePolicies', () => {
  const policy = (name: string, labels: Record<string, string>, kind = 'ValidatingAdmissionPolicy') => ({ apiVersion: 'admissionregistration.k8s.io/v1', kind, metadata: { name, labels } }) as KubeObject;
  const furnish = { 'app.kubernetes.io/part-of': 'furnish' };
  it('are Furnish policies and bindings no longer rendered, but a local run\'s alone (by field manager): nobody else\'s, nor one still rendered', () => {
    const rendered = installedPolicies(settings);
    const kept = rendered[0]!;
    const managed = (o: KubeObject, ...managers: string[]) => ({ ...o, metadata: { ...o.metadata, managedFields: managers.map((manager) => ({ manager })) } }) as KubeObject;
    const local = { ...furnish, [KEY.localRun]: 'ab12' };
    const live = [
      { ...kept, metadata: { ...kept.metadata, labels: furnish } } as KubeObject,
      policy('furnish-reserved-names', furnish),
      policy('furnish-reserved-names', furnish, 'ValidatingAdmissionPolicyBinding'),
      managed(policy('furnish-guard-local', local), 'furnish-local'),
      // npm start wrote it, then furnish install took it over: the install's, whatever label it kept.
      managed(policy('furnish-taken-over', local), 'furnish-local', 'furnish-install'),
      policy('someone-elses', {}),
    ];
    expect(stalePolicies(live, rendered).map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['ValidatingAdmissionPolicy/furnish-reserved-names', 'ValidatingAdmissionPolicyBinding/furnish-reserved-names', 'ValidatingAdmissionPolicy/furnish-taken-over']);
  });
});

describe('policySettingsSource: which settings the in-tree variant is rendered from', () => {
  it('names --config, else FURNISH_POLICY_SETTINGS in --vars; warns for the functions\' defaults', () => {
    expect(policySettingsSource({ config: 'c.yaml' }, { vars: { FURNISH_POLICY_SETTINGS: '{}' }, where: 'v.json' })).toEqual({ severity: 'INFO', message: 'in-tree policies rendered from --config c.yaml' });
    expect(policySettingsSource({}, { vars: { FURNISH_POLICY_SETTINGS: '{}' }, where: 'v.json' })).toEqual({ severity: 'INFO', message: 'in-tree policies rendered from FURNISH_POLICY_SETTINGS in --vars v.json' });
    const defaults = policySettingsSource({}, { vars: {}, where: 'v.json' });
    expect(defaults.severity).toBe('WARNING');
    expect(defaults.message).toContain('in-tree policies rendered from the functions\' defaults: pass --config with the cluster\'s entry of the functions\' configuration if they run with other settings: the policies and matchConditions must name the same principals and organizations as the webhooks');
  });
});

describe('furnish webhooks, offline', () => {
  const cli = async (args: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(COMMANDS, ['webhooks', '--url', URL, '--cluster', 'prod', ...args], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env: {}, readStdin: () => '' });
    return { code, stderr, items: code === 0 ? parseAllDocuments(stdout).map((d) => d.toJS() as KubeObject) : [] };
  };
  const dir = mkdtempSync(join(tmpdir(), 'furnish-webhooks-config-'));

  it('prints today\'s registrations by default, and nothing else', async () => {
    const r = await cli([]);
    expect(r.code).toBe(0);
    expect(r.items).toEqual(webhookOnly);
  });

  it('never prints the in-tree variant without asking the cluster: --in-tree-policies is gone, --only policies is refused', async () => {
    const flag = await cli(['--in-tree-policies']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--in-tree-policies');
    const policies = await cli(['--only', 'policies']);
    expect(policies.code).toBe(2);
    expect(policies.stderr).toContain('--only policies: only for a cluster that evaluates ValidatingAdmissionPolicies, asked with --kubeconfig/--context');
    const registrations = await cli(['--only', 'registrations']);
    expect([registrations.code, registrations.items]).toEqual([0, webhookOnly]);
    expect((await cli(['--only', 'both'])).code).toBe(2);
  });

  it('names a --config it cannot use', async () => {
    const file = join(dir, 'typo.yaml');
    writeFileSync(file, 'organisations: {}\n');
    const r = await cli(['--config', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`--config ${file}: organisations: is not a policy setting`);
  });
});
