// What a kubeconfig says about reaching one API server, decided without I/O: the current (or a
// named) context's server, TLS material and credentials. The common kinds (bearer token, token
// file, client certificate and key, basic auth, a CA or insecure-skip-tls-verify) need nothing but
// this; exec and auth-provider plugins and proxies are left to @kubernetes/client-node
// (`plugin` names which), so that only clusters that use them pay for loading it.
import { isAbsolute, join } from 'node:path';

/** PEM or token material, inline (`-data`, already decoded) or in a file (absolute path). */
export type Material = { data: string } | { path: string };

export interface ResolvedKubeconfig {
  server: string;
  ca?: Material;
  cert?: Material;
  key?: Material;
  insecureSkipTlsVerify: boolean;
  tlsServerName?: string;
  token?: string;
  /** Re-read periodically: projected service-account tokens rotate. */
  tokenFile?: string;
  basic?: { username: string; password: string };
  /** Why this kubeconfig needs @kubernetes/client-node (`exec`, `auth-provider`, `proxy-url`), if it does. */
  plugin?: string;
}

export class KubeconfigError extends Error {
  constructor(where: string, problem: string) {
    super(`${where}: ${problem}`);
    this.name = 'KubeconfigError';
  }
}

function record(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The entry `name` of list `list` (clusters, users, contexts) and its body under `field`. */
function entry(doc: Record<string, unknown>, list: string, field: string, name: string, where: string): { body: Record<string, unknown>; path: string } {
  const items = Array.isArray(doc[list]) ? (doc[list] as unknown[]) : [];
  const i = items.findIndex((e) => record(e).name === name);
  if (i < 0) throw new KubeconfigError(where, `${list}: no entry named "${name}"`);
  return { body: record(record(items[i])[field]), path: `${list}[${i}].${field}` };
}

const fileIn = (baseDir: string, file: string) => (isAbsolute(file) ? file : join(baseDir, file));

function material(body: Record<string, unknown>, key: string, baseDir: string, where: string): Material | undefined {
  const data = str(body[`${key}-data`]);
  if (data !== undefined) {
    if (!/^[A-Za-z0-9+/=\s]+$/.test(data)) throw new KubeconfigError(where, `${key}-data is not base64`);
    return { data: Buffer.from(data, 'base64').toString('utf8') };
  }
  const file = str(body[key]);
  if (file === undefined) return undefined;
  return { path: fileIn(baseDir, file) };
}

/** Relative file names in a kubeconfig are relative to the kubeconfig's own directory, as kubectl reads them. */
export function resolveKubeconfig(doc: unknown, opts: { context?: string; baseDir: string; where: string }): ResolvedKubeconfig {
  const root = record(doc);
  const contextName = opts.context ?? str(root['current-context']);
  if (!contextName) throw new KubeconfigError(opts.where, 'current-context is not set and no context was named');
  const ctx = entry(root, 'contexts', 'context', contextName, opts.where);
  const clusterName = str(ctx.body.cluster);
  if (!clusterName) throw new KubeconfigError(opts.where, `${ctx.path}.cluster is missing`);
  const cluster = entry(root, 'clusters', 'cluster', clusterName, opts.where);
  const server = str(cluster.body.server);
  if (!server) throw new KubeconfigError(opts.where, `${cluster.path}.server is missing`);
  const userName = str(ctx.body.user);
  const user = userName ? entry(root, 'users', 'user', userName, opts.where) : { body: {}, path: '' };
  const at = (e: { path: string }) => `${opts.where}: ${e.path}`;
  const username = str(user.body.username);
  const tokenFile = str(user.body.tokenFile);
  const plugin = user.body.exec !== undefined ? 'exec' : user.body['auth-provider'] !== undefined ? 'auth-provider' : str(cluster.body['proxy-url']) ? 'proxy-url' : undefined;
  return {
    server: server.replace(/\/$/, ''),
    ca: material(cluster.body, 'certificate-authority', opts.baseDir, at(cluster)),
    cert: material(user.body, 'client-certificate', opts.baseDir, at(user)),
    key: material(user.body, 'client-key', opts.baseDir, at(user)),
    insecureSkipTlsVerify: cluster.body['insecure-skip-tls-verify'] === true,
    tlsServerName: str(cluster.body['tls-server-name']),
    token: str(user.body.token),
    tokenFile: tokenFile === undefined ? undefined : fileIn(opts.baseDir, tokenFile),
    basic: username !== undefined ? { username, password: str(user.body.password) ?? '' } : undefined,
    plugin,
  };
}

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The in-cluster configuration of a pod: the API server from the environment, the mounted CA and (rotating) token. */
export function inClusterConfig(env: Record<string, string | undefined>, saDir = SERVICE_ACCOUNT_DIR): ResolvedKubeconfig | undefined {
  const host = env.KUBERNETES_SERVICE_HOST;
  if (!host) return undefined;
  const port = env.KUBERNETES_SERVICE_PORT ?? '443';
  return { server: `https://${host.includes(':') ? `[${host}]` : host}:${port}`, ca: { path: join(saDir, 'ca.crt') }, insecureSkipTlsVerify: false, tokenFile: join(saDir, 'token') };
}

/** Where the default chain finds a kubeconfig, as kubectl does: KUBECONFIG (one file), ~/.kube/config, else in-cluster. */
export type KubeconfigSource = { file: string } | { inCluster: ResolvedKubeconfig } | { plugin: string } | { none: string };

export function defaultKubeconfigSource(env: Record<string, string | undefined>, exists: (path: string) => boolean, home: string | undefined, delimiter = ':'): KubeconfigSource {
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter((p) => p !== '');
  // Several files are merged by kubectl's rules: client-node implements them.
  if (listed.length > 1) return { plugin: `KUBECONFIG names ${listed.length} files` };
  if (listed.length === 1) return { file: listed[0]! };
  if (home && exists(join(home, '.kube', 'config'))) return { file: join(home, '.kube', 'config') };
  const inCluster = inClusterConfig(env);
  if (inCluster) return { inCluster };
  return { none: 'no kubeconfig: KUBECONFIG is not set, ~/.kube/config does not exist and KUBERNETES_SERVICE_HOST is not set (not in a cluster)' };
}
