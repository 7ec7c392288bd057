// kube-sim: a Kubernetes API server for tests, in-process. `startCluster()` generates a CA and a
// serving certificate, listens on 127.0.0.1 (a port the OS picks), writes a kubeconfig with one
// context per user, and returns handles for tests: the request log, fault injection, direct
// storage access and a certificate issuer for webhook servers.
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Authenticator, makeUsers, type SimUser, type UserSpec } from './authn.ts';
import { TokenWebhook } from './token-webhook.ts';
import { Controllers } from './controllers.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import { auditEvent, Faults, RequestLog, type Fault } from './observability.ts';
import { createCertificateAuthority, type KeyPairPem } from './pki.ts';
import { SUPERUSER_GROUP } from './rbac.ts';
import { ApiServer } from './server.ts';
import { DEFAULT_OPTIONS, Sim, type SimOptions } from './sim.ts';
import { WebhookAuthResolver, type AdmissionKubeconfig } from './webhook-auth.ts';

export type { Fault, RequestLogEntry } from './observability.ts';
export type { SimOptions } from './sim.ts';
export type { UserSpec } from './authn.ts';
export type { AdmissionKubeconfig, AdmissionAuthInfo } from './webhook-auth.ts';

export interface StartOptions extends Partial<SimOptions> {
  /** Users and their groups; `admin` (group system:masters) is always there. */
  users?: UserSpec[];
  /** Directory for the kubeconfig; a fresh temporary one (removed by stop()) when absent. */
  dir?: string;
  /** Port to listen on; 0 (the OS picks) by default. */
  port?: number;
  /** How many changes the watch history keeps before older resourceVersions get 410. */
  watchHistory?: number;
  /**
   * The kubeconfig kube-apiserver's admission plugins read (`kubeConfigFile` of the
   * WebhookAdmissionConfiguration): a path or an object of the same shape. Webhooks get the
   * credentials of the user named after their host (webhook-auth.ts); none: anonymous calls.
   */
  admissionKubeconfig?: string | AdmissionKubeconfig;
  /**
   * kube-apiserver's --authentication-token-webhook-config-file: a kubeconfig-format file naming a
   * TokenReview webhook asked about bearer tokens no other authenticator knows (token-webhook.ts).
   */
  tokenWebhookConfigFile?: string;
  /** A file to append one audit event per answered request to, as kube-apiserver's `--audit-log-path` (observability.ts auditEvent). */
  auditLog?: string;
}

export interface SimCluster {
  kubeconfigPath: string;
  server: string;
  caPem: string;
  users: Record<string, SimUser>;
  log: RequestLog;
  faults: { inject(f: Fault): () => void; clear(): void };
  /** Direct access to storage, the registry and the admission log, for test set-up and assertions. */
  sim: Sim;
  isSimulated: true;
  /** A serving certificate signed by the cluster CA (give the CA as caBundle to webhook configurations). */
  issueCertificate(hosts?: string[]): KeyPairPem;
  stop(): Promise<void>;
}

export const DEFAULT_USERS: UserSpec[] = [
  { name: 'admin', groups: [SUPERUSER_GROUP] },
  { name: 'alice', groups: ['dev'] },
  { name: 'bob', groups: ['dev'] },
  { name: 'mallory', groups: [] },
];

function withAdmin(users: UserSpec[]): UserSpec[] {
  const admin = users.find((u) => u.name === 'admin');
  if (!admin) return [DEFAULT_USERS[0]!, ...users];
  return users.map((u) => (u === admin ? { ...u, groups: [...new Set([SUPERUSER_GROUP, ...(u.groups ?? [])])] } : u));
}

function simOptions(opts: StartOptions): SimOptions {
  const chosen = Object.fromEntries(Object.keys(DEFAULT_OPTIONS).filter((k) => opts[k as keyof SimOptions] !== undefined)
    .map((k) => [k, opts[k as keyof SimOptions]]));
  return { ...DEFAULT_OPTIONS, ...chosen };
}

export async function startCluster(opts: StartOptions = {}): Promise<SimCluster> {
  const webhookAuth = WebhookAuthResolver.load(opts.admissionKubeconfig);
  const ca = createCertificateAuthority();
  const serving = ca.issue(['127.0.0.1', 'localhost'], 'kube-apiserver');
  const users = makeUsers(withAdmin(opts.users ?? DEFAULT_USERS));
  const sim = new Sim(simOptions(opts), users, ca.certPem, opts.watchHistory, webhookAuth);
  const controllers = new Controllers(sim);
  sim.bootstrap();
  const log = new RequestLog();
  const auditFd = opts.auditLog === undefined ? undefined : openSync(opts.auditLog, 'a');
  if (auditFd !== undefined) log.onAnswered((e) => writeSync(auditFd, `${auditEvent(e)}\n`));
  const faults = new Faults();
  const api = new ApiServer({ sim, authenticator: new Authenticator(users, sim.serviceAccountTokens, opts.tokenWebhookConfigFile === undefined ? undefined : TokenWebhook.load(opts.tokenWebhookConfigFile)), controllers, log, faults });
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, api.handle);
  // kube-apiserver keeps an idle connection 90 s (its http.Server IdleTimeout); Node closes one
  // after 5 s, and a client reusing it at that moment gets ECONNRESET on a request never answered.
  server.keepAliveTimeout = 90_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  api.setHost(`127.0.0.1:${port}`);
  const url = `https://127.0.0.1:${port}`;
  const ownDir = opts.dir === undefined;
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'kube-sim-'));
  mkdirSync(dir, { recursive: true }); // `--dir` may name a folder that does not exist yet
  const kubeconfigPath = join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfigPath, url, ca.certPem, users);
  let stopped = false;
  return {
    kubeconfigPath,
    server: url,
    caPem: ca.certPem,
    users: Object.fromEntries(users.map((u) => [u.name, u])),
    log,
    faults: { inject: (f) => faults.inject(f), clear: () => faults.clear() },
    sim,
    isSimulated: true,
    issueCertificate: (hosts = ['127.0.0.1', 'localhost']) => ca.issue(hosts),
    async stop() {
      if (stopped) return;
      stopped = true;
      controllers.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      if (auditFd !== undefined) closeSync(auditFd);
      if (ownDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
