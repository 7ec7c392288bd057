// The cluster every integration and end-to-end suite talks to. With FURNISH_TEST_KUBECONFIG set,
// it is that real cluster (users = its contexts; no request log, no fault injection); otherwise
// an in-process kube-sim, so the same suites run unchanged on a laptop, in CI and against a
// real API server. The user `admin` installs (the local stack then runs each component as its
// ServiceAccount, scripts/start/identities.ts) and plays users; the request log's `user` and
// `userAgent` say who sent each request.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { ensureFurnishNamespace } from '../../scripts/start/cluster.ts';
import { installIdentities, mintIdentities, type Identities } from '../../scripts/start/identities.ts';
import { connect, createKubeClient } from '../../shared/kube/client.ts';
import { silentLogger } from '../../shared/log.ts';
import { startCluster, type AdmissionKubeconfig, type Fault, type RequestLogEntry } from './kube-sim/index.ts';
import type { KeyPairPem } from './kube-sim/pki.ts';
import type { Sim } from './kube-sim/sim.ts';

export type { AdmissionKubeconfig, Fault, RequestLogEntry };

export interface TestUser {
  name: string;
  groups: string[];
  token: string;
  context: string;
}

export type LogFilter = Partial<Pick<RequestLogEntry, 'verb' | 'resource' | 'namespace' | 'user' | 'userAgent'>>;

export interface RequestLog {
  entries: RequestLogEntry[];
  count(filter?: LogFilter): number;
  /** create/update/patch/delete, excluding dryRun. */
  writes(filter?: LogFilter): number;
  reset(): void;
}

export interface TestCluster {
  /** Contexts named after users; current context admin. */
  kubeconfigPath: string;
  /** https://127.0.0.1:PORT */
  server: string;
  /** The cluster CA. */
  caPem: string;
  users: Record<string, TestUser>;
  /** undefined against a real cluster. */
  log?: RequestLog;
  /** undefined against a real cluster. */
  faults?: { inject(f: Fault): () => void; clear(): void };
  isSimulated: boolean;
  /** kube-sim only: direct access to storage, registry and the admission log. */
  sim?: Sim;
  /** kube-sim only: a serving certificate signed by the cluster CA, for webhook servers. */
  issueCertificate?: (hosts?: string[]) => KeyPairPem;
  /**
   * Where webhooks get their credentials: `kube-sim` (the admissionKubeconfig option), `none`
   * (kube-sim without it: anonymous calls), `api-server` (a real cluster: only its own
   * --admission-control-config-file counts; see webhookCallHint).
   */
  webhookCredentials: 'kube-sim' | 'none' | 'api-server';
  stop(): Promise<void>;
}

export interface TestClusterOptions {
  users?: Array<{ name: string; groups?: string[] }>;
  /** false: act like a cluster older than 1.22, without the `kubernetes.io/metadata.name` label. */
  metadataNameLabel?: boolean;
  /**
   * kube-sim: the kubeconfig its admission plugins use to authenticate to webhooks (a path or an
   * object; users[].name = the webhook's `host:port`, `*.domain` or `*`). A real cluster
   * (FURNISH_TEST_KUBECONFIG) cannot be given it: its API server must have been started with an
   * equivalent AdmissionConfiguration (see test/support/kube-sim/README.md).
   */
  admissionKubeconfig?: string | AdmissionKubeconfig;
  /**
   * kube-sim: a TokenReview webhook's config file (test/support/google-identity.ts), as kube-apiserver's
   * --authentication-token-webhook-config-file. A real cluster must have been started with it.
   */
  tokenWebhookConfigFile?: string;
  /**
   * kube-sim: false acts like kube-apiserver 1.26, without ValidatingAdmissionPolicies and webhook
   * matchConditions (default: kube-sim's, KUBE_SIM_ADMISSION_POLICIES). A real cluster is what it is.
   */
  admissionPolicies?: boolean;
}

const DEFAULT_TEST_USERS = [
  { name: 'admin', groups: ['system:masters'] },
  { name: 'alice', groups: ['dev'] },
  { name: 'bob', groups: ['dev'] },
  { name: 'mallory', groups: [] },
];

export async function useTestCluster(opts: TestClusterOptions = {}): Promise<TestCluster> {
  const external = process.env.FURNISH_TEST_KUBECONFIG;
  if (external) return externalCluster(external);
  const cluster = await startCluster({
    users: opts.users ?? DEFAULT_TEST_USERS,
    ...(opts.metadataNameLabel !== undefined ? { metadataNameLabel: opts.metadataNameLabel } : {}),
    ...(opts.admissionKubeconfig !== undefined ? { admissionKubeconfig: opts.admissionKubeconfig } : {}),
    ...(opts.tokenWebhookConfigFile !== undefined ? { tokenWebhookConfigFile: opts.tokenWebhookConfigFile } : {}),
    ...(opts.admissionPolicies !== undefined ? { admissionPolicies: opts.admissionPolicies } : {}),
  });
  return {
    kubeconfigPath: cluster.kubeconfigPath,
    server: cluster.server,
    caPem: cluster.caPem,
    users: Object.fromEntries(Object.values(cluster.users).map((u) => [u.name, { name: u.name, groups: u.groups, token: u.token, context: u.context }])),
    log: cluster.log,
    faults: cluster.faults,
    isSimulated: true,
    sim: cluster.sim,
    issueCertificate: cluster.issueCertificate,
    webhookCredentials: opts.admissionKubeconfig !== undefined ? 'kube-sim' : 'none',
    stop: () => cluster.stop(),
  };
}

/**
 * Furnish's components' identities on this cluster, as the local stack runs them
 * (scripts/start/identities.ts), for suites that run a component themselves: Furnish's namespace,
 * infra/'s ServiceAccounts and RBAC installed as the admin, a token minted for each. Give a
 * component `identities.<component>.credentials` (or `.token()`), never the admin's; remove() at the end.
 */
export async function componentIdentities(cluster: Pick<TestCluster, 'kubeconfigPath' | 'isSimulated' | 'users'>): Promise<Identities> {
  const admin = { kubeconfigPath: cluster.kubeconfigPath, context: cluster.isSimulated ? cluster.users.admin!.context : undefined };
  const conn = await connect(admin);
  const kube = createKubeClient(conn, { userAgent: 'furnish-test-install' });
  try {
    await ensureFurnishNamespace(kube, silentLogger);
    await installIdentities(kube, silentLogger);
    // Minted once for the suite (an hour): no renewal.
    const identities = await mintIdentities(kube, conn, silentLogger, { renewEveryMs: 2 ** 31 - 1 });
    identities.stop();
    return identities;
  } finally {
    kube.close();
  }
}

/**
 * What to add to an error whose text shows a webhook refusing the API server's call with 401:
 * why the API server sent no (or the wrong) credentials on this cluster. '' for other errors.
 */
export function webhookCallHint(cluster: Pick<TestCluster, 'server' | 'webhookCredentials'>, message: string): string {
  // kube-apiserver quotes the Status message of the webhook's 401 (Furnish's names the bearer token),
  // or client-go's text for a 401 without one.
  if (!/failed calling webhook "[^"]+": .*(\b401\b|bearer token|asked for the client to provide credentials)/s.test(message)) return '';
  switch (cluster.webhookCredentials) {
    case 'api-server':
      return `\n(hint) the API server ${cluster.server} (FURNISH_TEST_KUBECONFIG) called a webhook without credentials the webhook accepts. `
        + 'useTestCluster cannot pass admissionKubeconfig to a real cluster: start its kube-apiserver with --admission-control-config-file '
        + 'naming an AdmissionConfiguration whose MutatingAdmissionWebhook and ValidatingAdmissionWebhook kubeConfigFile has a users[] entry '
        + 'named after the webhook host (host:port, *.domain or *) holding the webhook token (see test/support/kube-sim/README.md).';
    case 'none':
      return '\n(hint) kube-sim was started without admissionKubeconfig, so it calls webhooks without credentials: pass useTestCluster({ admissionKubeconfig }).';
    default:
      return '\n(hint) kube-sim\'s admissionKubeconfig has no entry for this webhook\'s host:port (nor *.domain or *), or its token was refused.';
  }
}

interface Kubeconfig {
  'current-context'?: string;
  clusters?: Array<{ name: string; cluster: { server: string; 'certificate-authority-data'?: string; 'certificate-authority'?: string } }>;
  contexts?: Array<{ name: string; context: { cluster: string; user: string } }>;
  users?: Array<{ name: string; user: { token?: string } }>;
}

/** A real cluster: one TestUser per context (groups unknown: the kubeconfig does not say). */
function externalCluster(kubeconfigPath: string): TestCluster {
  const config = parse(readFileSync(kubeconfigPath, 'utf8')) as Kubeconfig;
  const contexts = config.contexts ?? [];
  const current = contexts.find((c) => c.name === config['current-context']) ?? contexts[0];
  const cluster = config.clusters?.find((c) => c.name === current?.context.cluster)?.cluster;
  if (!cluster) throw new Error(`FURNISH_TEST_KUBECONFIG=${kubeconfigPath}: no cluster for the current context`);
  const caPem = cluster['certificate-authority-data']
    ? Buffer.from(cluster['certificate-authority-data'], 'base64').toString('utf8')
    : cluster['certificate-authority'] ? readFileSync(cluster['certificate-authority'], 'utf8') : '';
  const users = Object.fromEntries(contexts.map((c) => [c.name, {
    name: c.name, groups: [], context: c.name, token: config.users?.find((u) => u.name === c.context.user)?.user.token ?? '',
  }]));
  return { kubeconfigPath, server: cluster.server, caPem, users, isSimulated: false, webhookCredentials: 'api-server', stop: async () => {} };
}
