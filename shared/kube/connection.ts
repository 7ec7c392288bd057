// How the reconcilers and the relay reach a cluster: the kubeconfig (inline, a file, or the default
// chain KUBECONFIG / ~/.kube/config / in-cluster service account) read with `yaml` and resolved by
// kubeconfig.ts. Bearer tokens, token files, client certificates and basic auth need nothing more;
// a kubeconfig with an exec or auth-provider plugin, a proxy, or several KUBECONFIG files is handed
// to @kubernetes/client-node, imported here and only here, lazily, so that no one else pays for it.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname } from 'node:path';
import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent, RequestOptions } from 'node:https';
import { applicationDefaultTokens, googleHeaders, type AccessTokens, type GoogleTarget } from './google.ts';
import { defaultKubeconfigSource, KubeconfigError, resolveKubeconfig, type Material, type ResolvedKubeconfig } from './kubeconfig.ts';
import type { TlsOptions } from './transport.ts';

/**
 * Where credentials come from: a kubeconfig (path, inline YAML, or the default chain), with an
 * optional context; or, for GKE, the API server reached with this process's Google identity (google.ts).
 */
export interface Credentials {
  kubeconfigPath?: string;
  kubeconfigYaml?: string;
  context?: string;
  google?: GoogleTarget;
}

/** How to reach one API server: URL, TLS material (or a ready agent), and headers refreshed per request. */
export interface Connection {
  server: string;
  tls?: TlsOptions;
  /** A ready agent: a proxied cluster's (client-node's), or a test's. */
  agent?: HttpAgent | HttpsAgent;
  headers(): Promise<Record<string, string>>;
  /** `kubeconfig` when read by Furnish itself, `client-node` when a plugin needed it, `google` for a Google identity. */
  via?: 'kubeconfig' | 'client-node' | 'google';
  /** Concurrent connections to the API server (the transport's agent). */
  maxSockets?: number;
}

/** A projected service-account token is rotated by the kubelet; re-reading it this often is what client-go does. */
const TOKEN_FILE_TTL_MS = 60_000;

function readMaterial(m: Material | undefined, what: string): string | undefined {
  if (!m) return undefined;
  if ('data' in m) return m.data;
  try {
    return readFileSync(m.path, 'utf8');
  } catch (e) {
    throw new Error(`${what} ${m.path}: ${(e as Error).message}`, { cause: e });
  }
}

function tokenFileReader(path: string, now: () => number = Date.now): () => string {
  let cached: { token: string; at: number } | undefined;
  return () => {
    if (!cached || now() - cached.at > TOKEN_FILE_TTL_MS) cached = { token: readFileSync(path, 'utf8').trim(), at: now() };
    return cached.token;
  };
}

/** The headers a resolved kubeconfig's credentials make. */
function credentialHeaders(r: ResolvedKubeconfig): () => Promise<Record<string, string>> {
  const tokenOf = r.token !== undefined ? () => r.token! : r.tokenFile !== undefined ? tokenFileReader(r.tokenFile) : undefined;
  const basic = r.basic && `Basic ${Buffer.from(`${r.basic.username}:${r.basic.password}`).toString('base64')}`;
  return async (): Promise<Record<string, string>> => (tokenOf ? { authorization: `Bearer ${tokenOf()}` } : basic ? { authorization: basic } : {});
}

export function connectionOf(r: ResolvedKubeconfig, maxSockets?: number): Connection {
  const tls: TlsOptions = {
    ca: readMaterial(r.ca, 'certificate-authority'),
    cert: readMaterial(r.cert, 'client-certificate'),
    key: readMaterial(r.key, 'client-key'),
    rejectUnauthorized: !r.insecureSkipTlsVerify,
    servername: r.tlsServerName,
  };
  return { server: r.server, tls, headers: credentialHeaders(r), via: 'kubeconfig', maxSockets };
}

/** A cluster reached with this process's Google identity (GKE): its access token as the bearer, Application Default Credentials by default. */
export function googleConnection(target: GoogleTarget, maxSockets: number, tokens: AccessTokens = applicationDefaultTokens()): Connection {
  return { server: target.server.replace(/\/$/, ''), tls: { ca: target.caPem, rejectUnauthorized: true }, headers: googleHeaders(tokens), via: 'google', maxSockets };
}

type Located = { resolved: ResolvedKubeconfig } | { plugin: string };

async function locate(creds: Credentials, env: Record<string, string | undefined>): Promise<Located> {
  let text: string;
  let where: string;
  let baseDir = process.cwd();
  if (creds.kubeconfigYaml !== undefined) {
    text = creds.kubeconfigYaml;
    where = 'kubeconfig (inline)';
  } else {
    const source = creds.kubeconfigPath ? { file: creds.kubeconfigPath } : defaultKubeconfigSource(env, existsSync, homedir(), delimiter);
    if ('none' in source) throw new Error(source.none);
    if ('plugin' in source) return source;
    if ('inCluster' in source) return { resolved: source.inCluster };
    where = source.file;
    baseDir = dirname(source.file);
    try {
      text = readFileSync(source.file, 'utf8');
    } catch (e) {
      throw new KubeconfigError(source.file, (e as Error).message);
    }
  }
  const { parse } = await import('yaml');
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    throw new KubeconfigError(where, `not YAML: ${(e as Error).message}`);
  }
  const resolved = resolveKubeconfig(doc, { context: creds.context, baseDir, where });
  return resolved.plugin ? { plugin: resolved.plugin } : { resolved };
}

/** The connection the credentials name; throws a KubeconfigError naming the file and entry when they are unusable. */
export async function connect(creds: Credentials = {}, maxSockets = 64, env: Record<string, string | undefined> = process.env): Promise<Connection> {
  if (creds.google) return googleConnection(creds.google, maxSockets);
  const located = await locate(creds, env);
  return 'resolved' in located ? connectionOf(located.resolved, maxSockets) : clientNodeConnection(creds, maxSockets);
}

/** Server, CA and bearer token of a kubeconfig, for components configured with those (the local webhooks). */
export async function bearerCredentials(creds: Credentials = {}): Promise<{ server: string; caPem?: string; token?: string }> {
  const conn = await connect(creds);
  const auth = (await conn.headers()).authorization;
  return { server: conn.server, caPem: conn.tls?.ca ? String(conn.tls.ca) : undefined, token: auth?.startsWith('Bearer ') ? auth.slice(7) : undefined };
}

/** A kubeconfig client-node resolves (exec and OIDC plugins, proxies, merged KUBECONFIG files). */
async function clientNodeConnection(creds: Credentials, maxSockets: number): Promise<Connection> {
  const k8s = await import('@kubernetes/client-node');
  const kc = new k8s.KubeConfig();
  if (creds.kubeconfigYaml) kc.loadFromString(creds.kubeconfigYaml);
  else if (creds.kubeconfigPath) kc.loadFromFile(creds.kubeconfigPath);
  else kc.loadFromDefault();
  if (creds.context) kc.setCurrentContext(creds.context);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('the kubeconfig names no current cluster');
  const probe: RequestOptions = {};
  await kc.applyToHTTPSOptions(probe);
  return {
    server: cluster.server.replace(/\/$/, ''),
    // Our own keep-alive agent (the transport's) with the TLS material client-node resolved; a
    // proxied cluster keeps client-node's agent.
    agent: cluster.proxyUrl ? (probe.agent as HttpsAgent) : undefined,
    tls: { ca: probe.ca as string | undefined, cert: probe.cert as string | undefined, key: probe.key as string | undefined, rejectUnauthorized: probe.rejectUnauthorized ?? true, servername: probe.servername ?? undefined },
    via: 'client-node',
    async headers() {
      const opts: RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      const h: Record<string, string> = {};
      for (const [k, v] of Object.entries(opts.headers ?? {})) if (typeof v === 'string') h[k.toLowerCase()] = v;
      if (opts.auth && !h.authorization) h.authorization = `Basic ${Buffer.from(opts.auth).toString('base64')}`;
      return h;
    },
    maxSockets,
  };
}
