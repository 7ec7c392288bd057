// One `terraform apply`, then one `furnish install --vars` per cluster (issue 27, items 1 and 2),
// proved offline: with only what the provider reads at plan time (each GKE cluster's endpoint and
// CA, data google_container_cluster) and what apply generates (the credentials), every value the
// functions and `furnish install` need is known; nothing waits on a token or anything else that
// only the cluster side makes. On GKE the functions reach the cluster as their Google service
// accounts: the reconcilers' FURNISH_CLUSTERS and the webhooks' configuration say so, IAM lets
// GKE authenticate those accounts, and install_vars names them so that `furnish install` binds them.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerraformModel, unknownsIn, type Applied } from '../../scripts/terraform-eval.ts';
import { loadConfig } from '../../shared/config/load.ts';
import { WEBHOOKS } from '../../shared/config/types.ts';
import { policySettingsOption } from '../../shared/cli/webhooks-command.ts';
import { clusterObjects } from '../../shared/install/install.ts';
import { installedPolicies } from '../../shared/install/policies.ts';
import { IDENTITY_VARS, loadKustomization } from '../../shared/install/manifests.ts';
import { parseInstallVars, PATH_CREDENTIAL_VAR, POLICY_SETTINGS_VAR } from '../../shared/install/vars.ts';
import { credentialsFor } from '../../shared/kube/credentials.ts';
import { reconcileConfig } from '../../shared/reconcile/config.ts';

const TERRAFORM = join(import.meta.dirname, '..', '..', 'terraform');
const PROJECT = 'acme-prod';
const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBdzCCAR2gAwIBAgIUQ\n-----END CERTIFICATE-----\n';
const DNS_ENDPOINT = 'gke-0123456789abcdef-123456789012.europe-west1.gke.goog';
const VARIABLES = {
  project_id: PROJECT,
  name_prefix: 'acme',
  gke_clusters: {
    prod: { name: 'prod-eu', location: 'europe-west1', project: null, dns_endpoint: true },
    legacy: { name: 'legacy', location: 'europe-west1-b', project: 'acme-legacy', dns_endpoint: false },
  },
  cluster_secrets: { edge: { kubeconfig_secret_id: 'acme-edge-kubeconfig', api: null } },
};
const RECONCILER = `acme-reconciler@${PROJECT}.iam.gserviceaccount.com`;
const WEBHOOK = `acme-webhook@${PROJECT}.iam.gserviceaccount.com`;

/** What the provider reads (the cluster) and what apply generates (random_password), nothing more. */
const APPLIED: Applied = {
  random_password: (a, address) => ({ result: createHash('sha512').update(address).digest('hex').slice(0, Number(a.length)) }),
  'data.google_container_cluster': (a) => ({
    endpoint: `34.${String(a.name).length}.0.1`,
    master_auth: [{ cluster_ca_certificate: Buffer.from(CA_PEM).toString('base64') }],
    control_plane_endpoints_config: [{ dns_endpoint_config: [{ endpoint: DNS_ENDPOINT, allow_external_traffic: true }] }],
  }),
};

let tf: TerraformModel;
let installVars: Record<string, Record<string, string>>;
const fnEnv = async (fn: string) => (await tf.attribute('google_cloudfunctions2_function', 'fn', fn, ['service_config', 0, 'environment_variables'])) as Record<string, string>;

beforeAll(async () => {
  tf = await TerraformModel.load(TERRAFORM, VARIABLES, APPLIED);
  installVars = (await tf.output('install_vars')) as Record<string, Record<string, string>>;
}, 60_000);

describe('one apply: nothing waits on the cluster side', () => {
  it('knows install_vars, the reconcilers\' environment and the webhooks\' configuration from the apply alone (no cluster_webhook_tokens, no kubeconfig version)', async () => {
    expect(unknownsIn(installVars)).toEqual([]);
    for (const fn of (await tf.instances('google_cloudfunctions2_function', 'fn')).keys()) expect({ fn, unknown: unknownsIn(await fnEnv(fn)) }).toEqual({ fn, unknown: [] });
    expect(unknownsIn(await tf.attribute('google_secret_manager_secret_version', 'webhook_config', '', ['secret_data']))).toEqual([]);
  });

  it('gives furnish install every template variable of infra/ for each cluster, the relay image and the credential path aside, and the Google users of each GKE cluster', () => {
    const used = new Set(JSON.stringify(loadKustomization()).match(/\$\{FURNISH_[A-Z_]+\}/g)!.map((p) => p.slice(2, -1)));
    const ownedByInstaller = ['FURNISH_RELAY_IMAGE', 'FURNISH_WEBHOOK_CREDENTIAL_PATH'];
    // Not a template variable: install builds FURNISH_WEBHOOK_CREDENTIAL_PATH from it.
    const forInstaller = [PATH_CREDENTIAL_VAR, POLICY_SETTINGS_VAR];
    expect(Object.keys(installVars).sort()).toEqual(['edge', 'legacy', 'prod']);
    for (const [id, vars] of Object.entries(installVars)) {
      const parsed = parseInstallVars(JSON.stringify(vars), `install_vars.${id}`);
      expect({ id, missing: [...used].filter((v) => !(v in parsed) && !ownedByInstaller.includes(v)) }).toEqual({ id, missing: [] });
      expect({ id, unused: Object.keys(parsed).filter((v) => !used.has(v) && !(v in IDENTITY_VARS) && !forInstaller.includes(v)) }).toEqual({ id, unused: [] });
    }
    expect(installVars.prod).toMatchObject({ FURNISH_RECONCILER_USER: RECONCILER, FURNISH_WEBHOOK_USER: WEBHOOK });
    expect(installVars.legacy).toMatchObject({ FURNISH_RECONCILER_USER: RECONCILER, FURNISH_WEBHOOK_USER: WEBHOOK });
    expect(Object.keys(installVars.edge!).filter((v) => v in IDENTITY_VARS)).toEqual([]);
  });

  it('binds, as rendered by furnish install from install_vars, the Google users to exactly the roles of their ServiceAccounts', () => {
    const render = (vars: Record<string, string>) => clusterObjects({ ...vars, FURNISH_RELAY_IMAGE: `r.example/relay@sha256:${'0f'.repeat(32)}` })
      .filter((o) => o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding')
      .map((o) => ({ role: (o.roleRef as { name: string }).name, subjects: (o.subjects ?? []) as { kind: string; name: string }[] }));
    const rolesOf = (bindings: ReturnType<typeof render>, kind: string, name: string) => bindings.filter((b) => b.subjects.some((s) => s.kind === kind && s.name === name)).map((b) => b.role).sort();
    const gke = render(installVars.prod!);
    expect(rolesOf(gke, 'User', RECONCILER)).toEqual(rolesOf(gke, 'ServiceAccount', 'furnish-reconciler'));
    expect(rolesOf(gke, 'User', WEBHOOK)).toEqual(rolesOf(gke, 'ServiceAccount', 'furnish-webhook'));
    expect(rolesOf(gke, 'User', RECONCILER).length).toBeGreaterThan(0);
    expect(render(installVars.edge!).flatMap((b) => b.subjects).filter((s) => s.kind === 'User')).toEqual([]);
  });
});

describe('GKE clusters reached with the functions\' Google service accounts', () => {
  it('gives the reconcilers credential source google: the DNS endpoint without a CA, the IP endpoint with the cluster CA; the kubeconfig secret elsewhere', async () => {
    const config = reconcileConfig(await fnEnv('reconcile-namespace'));
    expect(config.clusters.prod).toEqual({ google: { server: `https://${DNS_ENDPOINT}` } });
    expect(config.clusters.legacy).toEqual({ google: { server: 'https://34.6.0.1', caPem: CA_PEM } });
    expect(config.clusters.edge).toEqual({ secret: `projects/${PROJECT}/secrets/acme-edge-kubeconfig/versions/latest` });
    expect(await credentialsFor('prod', config.clusters, () => Promise.reject(new Error('no secret is read')))).toEqual({ google: { server: `https://${DNS_ENDPOINT}` } });
  });

  /** The webhooks' configuration file as Terraform writes it, read as webhook `fn` reads it. */
  async function webhookConfig(fn: string) {
    const dir = mkdtempSync(join(tmpdir(), 'furnish-gke-config-'));
    writeFileSync(join(dir, 'config.yaml'), String(await tf.attribute('google_secret_manager_secret_version', 'webhook_config', '', ['secret_data'])));
    return loadConfig({ ...(await fnEnv(fn)), FURNISH_CONFIG_FILE: join(dir, 'config.yaml') });
  }

  it('configures every webhook to ask a GKE cluster as its Google account, with the reconcilers\' account as the guard\'s reconciler and the trusted creator', async () => {
    for (const fn of WEBHOOKS) {
      const config = await webhookConfig(fn);
      expect(config.clusters.map((c) => c.id)).toEqual(['legacy', 'prod', 'edge']);
      const prod = config.clusters.find((c) => c.id === 'prod')!;
      expect(prod.api).toEqual({ server: `https://${DNS_ENDPOINT}`, credential: 'google', timeoutMs: 2000 });
      expect(config.clusters.find((c) => c.id === 'legacy')!.api).toMatchObject({ server: 'https://34.6.0.1', caPem: CA_PEM, credential: 'google' });
      expect({ fn, reconciler: prod.guard.reconciler, trusted: prod.trustedCreators }).toEqual({ fn, reconciler: [RECONCILER], trusted: [RECONCILER] });
      expect(config.clusters.find((c) => c.id === 'edge')!.guard.reconciler).toEqual(['system:serviceaccount:furnish-system:furnish-reconciler']);
    }
  });

  // Issue 29: the in-tree policies furnish install renders must name the principals the webhooks
  // name; on GKE the reconciler is its Google account (with the defaults, no namespace would become ready).
  it('hands furnish install the policy settings the webhooks decide with (install_vars FURNISH_POLICY_SETTINGS)', async () => {
    const config = await webhookConfig('validate-namespace');
    for (const cluster of config.clusters) {
      const settings = policySettingsOption({}, { vars: installVars[cluster.id]!, where: `install_vars.${cluster.id}` });
      const asWebhooks = Object.fromEntries(Object.keys(settings).map((k) => [k, cluster[k as keyof typeof cluster]]));
      expect({ id: cluster.id, settings }).toEqual({ id: cluster.id, settings: asWebhooks });
    }
    const prod = policySettingsOption({}, { vars: installVars.prod!, where: 'install_vars.prod' });
    expect(prod.guard.reconciler).toEqual([RECONCILER]);
    expect(JSON.stringify(installedPolicies(prod))).toContain(`request.userInfo.username == \\"${RECONCILER}\\"`);
  });

  it('lets GKE authenticate the two accounts in each project holding a GKE cluster (roles/container.clusterViewer), and reads each cluster by name and location', async () => {
    for (const resource of ['webhook_authenticates_to_gke', 'reconciler_authenticates_to_gke']) {
      const projects = [...(await tf.instances('google_project_iam_member', resource)).keys()];
      expect(projects).toEqual(['acme-legacy', PROJECT]);
      for (const p of projects) {
        expect(await tf.attribute('google_project_iam_member', resource, p, ['role'])).toBe('roles/container.clusterViewer');
        expect(await tf.attribute('google_project_iam_member', resource, p, ['member'])).toBe(`serviceAccount:${resource.startsWith('webhook') ? WEBHOOK : RECONCILER}`);
      }
    }
    expect(await tf.attribute('data.google_container_cluster', 'gke', 'legacy', ['project'])).toBe('acme-legacy');
    expect(await tf.attribute('data.google_container_cluster', 'gke', 'prod', ['project'])).toBe(PROJECT);
    expect(await tf.attribute('data.google_container_cluster', 'gke', 'prod', ['location'])).toBe('europe-west1');
  });
});
