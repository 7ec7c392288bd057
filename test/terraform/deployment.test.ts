// What Terraform creates and what infra/ puts in the cluster must name the same things, for any
// name_prefix: the relay is given exactly the topics Terraform creates (and the reconcilers the same
// ones), its Kubernetes identity is the one Workload Identity trusts, the webhook URLs are the
// functions' audiences, and every variable either side sets is one the code reads. Terraform is
// evaluated offline (scripts/terraform-eval.ts) for a non-default prefix, and infra/ is rendered
// the way `furnish install --vars` renders it from Terraform's output install_vars.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerraformModel, unknownsIn, type Applied } from '../../scripts/terraform-eval.ts';
import { audienceFor, loadConfig } from '../../shared/config/load.ts';
import { billingTapConfig } from '../../shared/billing/tap.ts';
import { SETTINGS, type Setting } from '../../shared/config/settings.ts';
import { defaultPolicySettings, DEFAULT_FURNISH_NAMESPACE, WEBHOOKS } from '../../shared/config/types.ts';
import { clusterObjects } from '../../shared/install/install.ts';
import { loadKustomization } from '../../shared/install/manifests.ts';
import { RELAY_MALLOC_ENV } from '../../functions/watch-relay/lib/malloc-env.ts';
import { parseInstallVars, PATH_CREDENTIAL_VAR, POLICY_SETTINGS_VAR } from '../../shared/install/vars.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { reconcileConfig, type Topics } from '../../shared/reconcile/config.ts';
import { relayConfig } from '../../functions/watch-relay/lib/config.ts';
import { DEFAULT_DRIFT_RESOURCES } from '../../functions/watch-relay/lib/drift-watch.ts';
import { LNS_DRIFT_RESOURCES } from '../../shared/lnamespace/relay.ts';
import { webhookRegistrations } from '../../shared/webhooks/registration.ts';

const TERRAFORM = join(import.meta.dirname, '..', '..', 'terraform');
const PROJECT = 'acme-prod';
const PREFIX = 'acme';
const POOL = `${PROJECT}.svc.id.goog`;
const DIGEST = `europe-docker.pkg.dev/acme-prod/furnish/relay@sha256:${'0f'.repeat(32)}`;
const VARIABLES = {
  project_id: PROJECT,
  name_prefix: PREFIX,
  cluster_secrets: { prod: { kubeconfig_secret_id: 'acme-prod-kubeconfig', api: null } },
  relay_workload_identity_pools: [POOL],
};

interface Container {
  env: { name: string; value: string }[];
  ports: { name: string; containerPort: number }[];
  readinessProbe: { httpGet: { port: string | number } };
  livenessProbe: { httpGet: { port: string | number } };
}
interface PodSpec {
  serviceAccountName: string;
  containers: Container[];
}

let tf: TerraformModel;
/** infra/ as `furnish install --vars <terraform output -json install_vars | jq .prod>` applies it. */
let objects: KubeObject[];
let installVars: Record<string, string>;
let relayEnv: Record<string, string>;
let relayPod: PodSpec;
/** The topic names Terraform creates. */
let created: string[];

const byKind = (kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name)!;
const envOf = (c: Container) => Object.fromEntries(c.env.map((e) => [e.name, e.value]));
const topicNames = (t: Topics) => [t.namespaces, t.templates, t.lnamespaces];
const fnEnv = async (fn: string) => (await tf.attribute('google_cloudfunctions2_function', 'fn', fn, ['service_config', 0, 'environment_variables'])) as Record<string, string>;
const reconcilerFunctions = async () => [...(await tf.instances('google_cloudfunctions2_function', 'fn')).keys()].filter((fn) => !(WEBHOOKS as readonly string[]).includes(fn));
const settingsUsedBy = (components: readonly string[]) =>
  new Set((Object.values(SETTINGS) as Setting[]).filter((s) => s.env !== undefined && s.usedBy.some((c) => components.includes(c))).map((s) => s.env!));

beforeAll(async () => {
  // After the one apply: its generated secrets (the path credential in install_vars) are known.
  tf = await TerraformModel.load(TERRAFORM, VARIABLES, APPLIED);
  const output = (await tf.output('install_vars')) as Record<string, unknown>;
  expect(unknownsIn(output)).toEqual([]);
  installVars = parseInstallVars(JSON.stringify(output.prod), 'install_vars.prod');
  objects = clusterObjects({ ...installVars, FURNISH_RELAY_IMAGE: DIGEST });
  relayPod = (byKind('Deployment', 'furnish-relay').spec as { template: { spec: PodSpec } }).template.spec;
  relayEnv = envOf(relayPod.containers[0]!);
  created = Object.values((await tf.output('topics')) as Record<string, string>);
}, 60_000);

describe(`terraform with name_prefix "${PREFIX}" and infra/ rendered from its output install_vars`, () => {
  it('gives the relay exactly the topics Terraform creates, in its project', () => {
    const relay = relayConfig(relayEnv);
    const billing = billingTapConfig(relayEnv, relay.cluster, relay.pageSize);
    expect(created.every((t) => t.startsWith(`${PREFIX}-`))).toBe(true);
    expect([...topicNames(relay.topics), billing?.topic].sort()).toEqual([...created].sort());
    expect(relay.pubsubProject).toBe(PROJECT);
    expect(relay.bus).toBe('pubsub');
    expect(relay.cluster).toBe('prod');
  });

  it('refuses a topic in reconciler_env, which would be replaced by the one created here, as the relay refuses an empty one', async () => {
    expect(await tf.failedValidations('reconciler_env')).toEqual([]);
    const given = await TerraformModel.load(TERRAFORM, { ...VARIABLES, reconciler_env: { FURNISH_KUBE_QPS: '50', FURNISH_TOPIC_TEMPLATES: '' } });
    expect(await given.failedValidations('reconciler_env')).toEqual([expect.stringContaining('reconciler_env: FURNISH_TOPIC_* are set from the topics this module creates')]);
    expect(() => relayConfig({ ...relayEnv, FURNISH_TOPIC_TEMPLATES: '' })).toThrow('FURNISH_TOPIC_TEMPLATES: is empty');
  });

  it('gives every reconciler the same topics and project as the relay', async () => {
    const relay = relayConfig(relayEnv);
    const reconcilers = await reconcilerFunctions();
    expect(reconcilers.length).toBeGreaterThan(0);
    for (const fn of reconcilers) {
      const config = reconcileConfig(await fnEnv(fn));
      expect({ fn, topics: config.topics, project: config.pubsubProject }).toEqual({ fn, topics: relay.topics, project: PROJECT });
    }
  });

  it('subscribes a function to every topic the relay publishes to, and to no other', async () => {
    const subscriptions = await tf.instances('google_pubsub_subscription', 'push');
    const subscribed = new Set<string>();
    for (const key of subscriptions.keys()) subscribed.add(String(await tf.attribute('google_pubsub_subscription', 'push', key, ['topic'])));
    const published = [...topicNames(relayConfig(relayEnv).topics), relayEnv.FURNISH_TOPIC_BILLING];
    expect([...subscribed].sort()).toEqual(published.map((t) => `projects/${PROJECT}/topics/${t}`).sort());
  });

  it('waits for each push as long as the function may run (a push\'s request timeout is its ack deadline), so a reconcile still running is never delivered again beside itself', async () => {
    const reconcilers = await reconcilerFunctions();
    const timeouts = await Promise.all(reconcilers.map(async (fn) => Number(await tf.attribute('google_cloudfunctions2_function', 'fn', fn, ['service_config', 0, 'timeout_seconds']))));
    expect(Math.max(...timeouts)).toBe(300);
    for (const key of (await tf.instances('google_pubsub_subscription', 'push')).keys()) {
      expect([key, await tf.attribute('google_pubsub_subscription', 'push', key, ['ack_deadline_seconds'])]).toEqual([key, Math.max(...timeouts)]);
    }
    const tooLong = await TerraformModel.load(TERRAFORM, { ...VARIABLES, reconciler: { max_instances: 10, memory: '512Mi', timeout: 900, concurrency: 8 } });
    expect(await tooLong.failedValidations('reconciler')).toEqual([expect.stringContaining('reconciler.timeout: between 10 and 600 seconds')]);
  });

  it('tells the reconcilers their timeout, so that a delivery stops calling before its redelivery may start; refuses a timeout they would refuse', async () => {
    for (const fn of await reconcilerFunctions()) {
      const env = await fnEnv(fn);
      expect([fn, env.FURNISH_DELIVERY_TIMEOUT_SECONDS]).toEqual([fn, '300']);
    }
    const sized = (timeout: number, env: Record<string, string> = {}) => TerraformModel.load(TERRAFORM, { ...VARIABLES, reconciler: { max_instances: 10, memory: '512Mi', timeout, concurrency: 8 }, reconciler_env: env });
    // Terraform's verdict is the reconcilers' own (reconcileConfig), for the default call timeout and another.
    for (const [timeout, env] of [[21, {}], [22, {}], [41, { FURNISH_KUBE_TIMEOUT_MS: '20000' }], [42, { FURNISH_KUBE_TIMEOUT_MS: '20000' }], [10, { FURNISH_KUBE_TIMEOUT_MS: '4000' }]] as const) {
      const refused = (await (await sized(timeout, env)).failedValidations('reconciler')).some((m) => m.includes("at least twice a Kubernetes call's timeout"));
      const starts = (() => {
        try {
          reconcileConfig({ ...env, FURNISH_PUSH_AUTH: 'off', FURNISH_DELIVERY_TIMEOUT_SECONDS: String(timeout) });
          return true;
        } catch {
          return false;
        }
      })();
      expect({ timeout, env, refused }).toEqual({ timeout, env, refused: !starts });
    }
    expect(await (await TerraformModel.load(TERRAFORM, { ...VARIABLES, reconciler_env: { FURNISH_DELIVERY_TIMEOUT_SECONDS: '60' } })).failedValidations('reconciler_env')).toEqual([expect.stringContaining('FURNISH_DELIVERY_TIMEOUT_SECONDS follows variable reconciler.timeout')]);
  });

  it('lets each side publish where it publishes: the relay on its topics, the reconcilers on fan-out (namespaces) and STATUS (templates)', async () => {
    const grants = new Map<string, Set<string>>();
    for (const resource of ['relay_publishes', 'reconciler_publishes']) {
      for (const key of (await tf.instances('google_pubsub_topic_iam_member', resource)).keys()) {
        const [topic, member, role] = await Promise.all(['topic', 'member', 'role'].map((a) => tf.attribute('google_pubsub_topic_iam_member', resource, key, [a])));
        if (role === 'roles/pubsub.publisher') grants.set(String(member), new Set([...(grants.get(String(member)) ?? []), String(topic)]));
      }
    }
    const relay = relayConfig(relayEnv);
    const relayAccount = `serviceAccount:${String(await tf.output('relay_service_account'))}`;
    const reconcilerAccount = `serviceAccount:${String(await tf.output('reconciler_service_account'))}`;
    expect([...(grants.get(relayAccount) ?? [])].sort()).toEqual([...topicNames(relay.topics), relayEnv.FURNISH_TOPIC_BILLING].sort());
    // shared/reconcile/template.ts publishes on topics.namespaces, shared/reconcile/runtime.ts STATUS on topics.templates.
    const reconciler = reconcileConfig(await fnEnv('reconcile-namespace')).topics;
    expect([...(grants.get(reconcilerAccount) ?? [])].sort()).toEqual([reconciler.namespaces, reconciler.templates].sort());
  });

  it('gives the reconcilers credentials for the cluster the relay names in its messages', async () => {
    const relay = relayConfig(relayEnv);
    for (const fn of ['reconcile-namespace', 'reconcile-template', 'record-billing', 'reconcile-lnamespace']) {
      expect({ fn, clusters: Object.keys(reconcileConfig(await fnEnv(fn)).clusters) }).toEqual({ fn, clusters: [relay.cluster] });
    }
  });

  it('sets only variables the relay reads, and every value Terraform decides comes from Terraform', () => {
    // GOOGLE_CLOUD_PROJECT: for Google's client libraries (and the Pub/Sub project's fallback).
    // MALLOC_*: glibc's, for the relay's RSS (functions/watch-relay/lib/malloc-env.ts).
    const read = new Set([...settingsUsedBy(['relay']), 'GOOGLE_CLOUD_PROJECT', ...Object.keys(RELAY_MALLOC_ENV)]);
    expect(Object.keys(relayEnv).filter((name) => !read.has(name))).toEqual([]);
    for (const [name, value] of Object.entries(installVars)) if (read.has(name)) expect({ name, value: relayEnv[name] }).toEqual({ name, value });
  });

  it('fills every template variable of infra/ from install_vars (the image and the credential path aside), and install_vars holds none infra/ does not use', () => {
    const used = new Set(JSON.stringify(loadKustomization()).match(/\$\{FURNISH_[A-Z_]+\}/g)!.map((p) => p.slice(2, -1)));
    const ownedByInstaller = ['FURNISH_RELAY_IMAGE', 'FURNISH_WEBHOOK_CREDENTIAL_PATH'];
    // Not a template variable: install builds FURNISH_WEBHOOK_CREDENTIAL_PATH from it.
    const forInstaller = [PATH_CREDENTIAL_VAR, POLICY_SETTINGS_VAR];
    expect([...used].filter((v) => !(v in installVars) && !ownedByInstaller.includes(v))).toEqual([]);
    expect(Object.keys(installVars).filter((v) => !used.has(v) && !forInstaller.includes(v))).toEqual([]);
    expect(JSON.stringify(objects)).not.toMatch(/\$\{/);
  });

  it('lets Workload Identity trust the relay\'s Kubernetes ServiceAccount as the Google account its annotation names', async () => {
    const namespace = byKind('Deployment', 'furnish-relay').metadata.namespace;
    const account = byKind('ServiceAccount', relayPod.serviceAccountName);
    expect(account.metadata.namespace).toBe(namespace);
    const email = String(await tf.output('relay_service_account'));
    expect(email).toBe(`${PREFIX}-relay@${PROJECT}.iam.gserviceaccount.com`);
    expect(account.metadata.annotations?.['iam.gke.io/gcp-service-account']).toBe(email);
    expect(await tf.attribute('google_service_account_iam_member', 'relay_workload_identity', POOL, ['member'])).toBe(`serviceAccount:${POOL}[${namespace}/${relayPod.serviceAccountName}]`);
  });

  it('registers each webhook at the URL Terraform deploys it at, which is the audience the function checks', async () => {
    const urls = (await tf.output('webhook_urls')) as Record<string, string>;
    expect(Object.keys(urls).sort()).toEqual([...WEBHOOKS].sort());
    // One configuration per function (infra/webhooks/<function>.yaml, in WEBHOOKS order); a function may serve several webhooks (protect-objects: protect-applyset, protect-scale).
    const configs = webhookRegistrations({ functionsUrl: installVars.FURNISH_FUNCTIONS_URL! }) as { webhooks: { name: string; clientConfig: { url: string } }[] }[];
    expect(configs).toHaveLength(WEBHOOKS.length);
    for (const [i, config] of configs.entries()) {
      const fn = WEBHOOKS[i]!;
      for (const hook of config.webhooks) {
        expect({ fn, webhook: hook.name, url: hook.clientConfig.url }).toEqual({ fn, webhook: hook.name, url: urls[fn] });
      }
      expect({ fn, audience: (await fnEnv(fn)).FURNISH_AUDIENCE }).toEqual({ fn, audience: urls[fn] });
    }
  });

  it('gives the functions only variables they read', async () => {
    const webhookReads = settingsUsedBy(['webhooks']);
    const reconcilerReads = settingsUsedBy(['reconcilers', 'billing', 'lnamespace']);
    for (const fn of (await tf.instances('google_cloudfunctions2_function', 'fn')).keys()) {
      const reads = (WEBHOOKS as readonly string[]).includes(fn) ? webhookReads : reconcilerReads;
      const unread = Object.keys(await fnEnv(fn)).filter((name) => name.startsWith('FURNISH_') && !reads.has(name));
      expect({ fn, unread }).toEqual({ fn, unread: [] });
    }
  });

  it('serves the relay\'s probes on the port it listens on', () => {
    const container = relayPod.containers[0]!;
    const port = relayConfig(relayEnv).port;
    const named = container.ports.find((p) => p.containerPort === port);
    expect(named).toBeDefined();
    for (const probe of [container.readinessProbe, container.livenessProbe]) expect([named!.name, port]).toContain(probe.httpGet.port);
  });

  it('grants the relay list and watch on everything it watches', () => {
    const binding = objects.find((o) => o.kind === 'ClusterRoleBinding' && ((o as { subjects?: { name: string }[] }).subjects ?? []).some((x) => x.name === relayPod.serviceAccountName))!;
    const role = byKind('ClusterRole', (binding as unknown as { roleRef: { name: string } }).roleRef.name) as unknown as { rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] };
    // As drift-watch.ts spells them: `plural` (core) or `plural.group/version`.
    const watched = ['namespaces', 'namespacetemplates.furnish.dev/v1alpha1', 'lnamespaces.furnish.dev/v1alpha1', ...DEFAULT_DRIFT_RESOURCES, ...LNS_DRIFT_RESOURCES];
    const ungranted = watched.filter((r) => {
      const [plural, group] = [r.split('.')[0]!, r.includes('.') ? r.slice(r.indexOf('.') + 1, r.lastIndexOf('/')) : ''];
      return !['list', 'watch'].every((verb) => role.rules.some((rule) => rule.apiGroups.includes(group) && rule.resources.includes(plural) && rule.verbs.includes(verb)));
    });
    expect(ungranted).toEqual([]);
  });

  it('exempts and trusts, by default, the namespace and reconciler identity infra/ creates', () => {
    expect(objects.filter((o) => o.kind === 'Namespace').map((o) => o.metadata.name)).toEqual([DEFAULT_FURNISH_NAMESPACE]);
    const accounts = objects.filter((o) => o.kind === 'ServiceAccount').map((o) => `system:serviceaccount:${o.metadata.namespace}:${o.metadata.name}`);
    const defaults = defaultPolicySettings();
    expect(accounts).toEqual(expect.arrayContaining([...defaults.guard.reconciler, ...defaults.trustedCreators]));
  });

  it('binds roles only to ServiceAccounts infra/ creates', () => {
    const accounts = new Set(objects.filter((o) => o.kind === 'ServiceAccount').map((o) => `${o.metadata.namespace}/${o.metadata.name}`));
    const subjects = objects
      .filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')
      .flatMap((o) => ((o as { subjects?: { kind: string; namespace?: string; name: string }[] }).subjects ?? []).filter((s) => s.kind === 'ServiceAccount').map((s) => `${s.namespace}/${s.name}`));
    expect(subjects.length).toBeGreaterThan(0);
    expect(subjects.filter((s) => !accounts.has(s))).toEqual([]);
  });
});

/** What apply generates, made up the way the provider makes it: random_password's `length` characters, letters and digits (special = false), distinct per instance. */
const APPLIED: Applied = {
  random_password: (a, address) => ({ result: createHash('sha512').update(address).digest('hex').slice(0, Number(a.length)) }),
};
const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUQ\n-----END CERTIFICATE-----\n';
const EDGE_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2ln';

describe('terraform\'s webhook configuration secret (yamlencode), as the webhooks load it', () => {
  let tfa: TerraformModel;
  beforeAll(async () => {
    tfa = await TerraformModel.load(TERRAFORM, {
      ...VARIABLES,
      cluster_secrets: { ...VARIABLES.cluster_secrets, edge: { kubeconfig_secret_id: 'acme-edge-kubeconfig', api: { server: 'https://edge.example.com:6443', ca_pem: CA_PEM } } },
      cluster_webhook_tokens: { edge: EDGE_TOKEN },
    }, APPLIED);
  }, 60_000);

  /** The secret's first version, mounted where the webhook function reads it, loaded with that function's environment. */
  const loaded = async (fn: string) => {
    const text = await tfa.attribute('google_secret_manager_secret_version', 'webhook_config', '', ['secret_data']);
    const env = (await tfa.attribute('google_cloudfunctions2_function', 'fn', fn, ['service_config', 0, 'environment_variables'])) as Record<string, string>;
    const dir = mkdtempSync(join(tmpdir(), 'furnish-webhook-config-'));
    writeFileSync(join(dir, 'config.yaml'), String(text));
    return { text: String(text), env, config: await loadConfig({ ...env, FURNISH_CONFIG_FILE: join(dir, 'config.yaml') }) };
  };

  it('turns the organization rules on or off for the webhooks and the reconcilers from one variable (variable organizations)', async () => {
    for (const on of [false, true]) {
      const model = on ? await TerraformModel.load(TERRAFORM, { ...VARIABLES, organizations: true }, APPLIED) : tfa;
      const text = String(await model.attribute('google_secret_manager_secret_version', 'webhook_config', '', ['secret_data']));
      const dir = mkdtempSync(join(tmpdir(), 'furnish-webhook-config-'));
      writeFileSync(join(dir, 'config.yaml'), text);
      const config = await loadConfig({ FURNISH_CONFIG_FILE: join(dir, 'config.yaml') });
      expect(config.clusters.map((c) => ({ id: c.id, enabled: c.organizations?.enabled }))).toEqual(config.clusters.map((c) => ({ id: c.id, enabled: on })));
      const reconcilerEnv = (await model.attribute('google_cloudfunctions2_function', 'fn', 'reconcile-organization', ['service_config', 0, 'environment_variables'])) as Record<string, string>;
      expect(reconcilerEnv.FURNISH_ORGANIZATIONS).toBe(String(on));
    }
    const overridden = await TerraformModel.load(TERRAFORM, { ...VARIABLES, reconciler_env: { FURNISH_ORGANIZATIONS: 'true' } });
    expect(await overridden.failedValidations('reconciler_env')).toEqual([expect.stringContaining('FURNISH_ORGANIZATIONS follows variable organizations')]);
  });

  it('is read by the webhooks from where Terraform mounts it', async () => {
    const env = (await tfa.attribute('google_cloudfunctions2_function', 'fn', 'validate-namespace', ['service_config', 0, 'environment_variables'])) as Record<string, string>;
    const volume = ['service_config', 0, 'dynamic', 'secret_volumes', 0, 'content', 0];
    const mountPath = await tfa.attribute('google_cloudfunctions2_function', 'fn', 'validate-namespace', [...volume, 'mount_path']);
    const file = await tfa.attribute('google_cloudfunctions2_function', 'fn', 'validate-namespace', [...volume, 'versions', 0, 'path']);
    expect(env.FURNISH_CONFIG_FILE).toBe(`${String(mountPath)}/${String(file)}`);
  });

  it('gives every webhook every cluster with the credentials Terraform generated and outputs', async () => {
    // The path credential reaches furnish install in install_vars (one output, no copy by hand).
    const pathCredentials = Object.fromEntries(Object.entries((await tfa.output('install_vars')) as Record<string, Record<string, string>>).map(([id, v]) => [id, v.FURNISH_PATH_CREDENTIAL!]));
    const jwtSecrets = (await tfa.output('jwt_secrets')) as Record<string, string>;
    expect(Object.keys(pathCredentials).sort()).toEqual(['edge', 'prod']);
    for (const fn of WEBHOOKS) {
      const { config } = await loaded(fn);
      expect(config.clusters.map((c) => c.id)).toEqual(['edge', 'prod']);
      for (const c of config.clusters) {
        expect({ fn, id: c.id, pathCredentials: c.pathCredentials }).toEqual({ fn, id: c.id, pathCredentials: [pathCredentials[c.id]] });
        expect({ fn, id: c.id, secret: Buffer.from(c.jwt?.secret ?? '').toString() }).toEqual({ fn, id: c.id, secret: jwtSecrets[c.id] });
      }
      expect(audienceFor(config, fn)).toBe(((await tfa.output('webhook_urls')) as Record<string, string>)[fn]);
      expect(config.publicUrl).toBe(await tfa.output('functions_url'));
    }
  });

  it('carries a cluster\'s API server, its CA as a literal block, and its token once given; none for a cluster without', async () => {
    const { text, config } = await loaded('validate-namespace');
    const edge = config.clusters.find((c) => c.id === 'edge')!;
    expect(edge.api).toMatchObject({ server: 'https://edge.example.com:6443', caPem: CA_PEM, token: EDGE_TOKEN });
    expect(config.clusters.find((c) => c.id === 'prod')!.api).toBeUndefined();
    // As Terraform writes it: keys sorted and double-quoted, the sequence not indented, the PEM a literal block.
    expect(text).toContain(`"clusters":\n- "api":\n    "caPem": |\n      -----BEGIN CERTIFICATE-----\n`);
  });
});
