// The credentials kube-apiserver presents to admission webhooks. kube-apiserver reads them from
// the kubeconfig named by `kubeConfigFile` in the WebhookAdmissionConfiguration of the
// ValidatingAdmissionWebhook / MutatingAdmissionWebhook plugins (--admission-control-config-file),
// and picks a `users[]` entry by the webhook's host, as k8s.io/apiserver/pkg/util/webhook
// (defaultAuthenticationInfoResolver) does for a clientConfig.url:
//
//   target = URL host:port (port 443 when the URL has none)
//   1. exact `host:port`
//   2. `*.` + the target without its first, then first two, ... labels (`*.example.com:8443`)
//   3. port 443 only: exact `host`, then `*.` + suffixes of the host (`*.example.com`)
//   4. `*`
//   5. the user of the kubeconfig's current context
//   6. nothing: an anonymous call
//
// The chosen user's `token` (else `tokenFile`) becomes `Authorization: Bearer`, `username` and
// `password` Basic authentication, `client-certificate[-data]`/`client-key[-data]` a TLS client
// certificate. Relative file paths are relative to the kubeconfig's directory, as clientcmd
// resolves them.
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse } from 'yaml';

/** A kubeconfig `users[].user` (AuthInfo), the fields kube-apiserver uses for webhooks. */
export interface AdmissionAuthInfo {
  token?: string;
  tokenFile?: string;
  'client-certificate'?: string;
  'client-certificate-data'?: string;
  'client-key'?: string;
  'client-key-data'?: string;
  username?: string;
  password?: string;
  exec?: unknown;
  'auth-provider'?: unknown;
}

/** The parts of a kubeconfig that matter for webhook credentials. */
export interface AdmissionKubeconfig {
  users?: Array<{ name: string; user?: AdmissionAuthInfo | null }>;
  contexts?: Array<{ name: string; context?: { user?: string } | null }>;
  'current-context'?: string;
}

/** What a webhook call carries: request headers and, for certificate authentication, a client certificate. */
export interface WebhookCredentials {
  /** Name of the kubeconfig user chosen; undefined: anonymous. */
  user?: string;
  headers: Record<string, string>;
  cert?: string;
  key?: string;
}

/** `host:port` of a webhook URL as kube-apiserver looks it up: the port defaults to 443. */
export function webhookTarget(url: URL): string {
  // WHATWG URL drops a default port (`:443`) from `host`; Go keeps it but then adds 443 anyway.
  return url.port ? url.host : `${url.host}:443`;
}

function starSuffixes(target: string): string[] {
  const labels = target.split('.');
  return labels.slice(1).map((_, i) => `*.${labels.slice(i + 1).join('.')}`);
}

/** The names kube-apiserver tries for `target` (host:port), in order, before `*` and the current context. */
export function candidateNames(target: string): string[] {
  const names = [target, ...starSuffixes(target)];
  const colon = target.lastIndexOf(':');
  if (colon > 0 && target.slice(colon + 1) === '443') {
    const host = target.slice(0, colon);
    names.push(host, ...starSuffixes(host));
  }
  return names;
}

/** Go's os.ReadFile wording, so messages look like kube-apiserver's. */
function readPath(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Error(`open ${path}: no such file or directory`, { cause: error });
    if (code === 'EACCES') throw new Error(`open ${path}: permission denied`, { cause: error });
    throw error;
  }
}

export class WebhookAuthResolver {
  private readonly users = new Map<string, AdmissionAuthInfo>();
  private readonly currentUser: string | undefined;
  private readonly baseDir: string;

  /** `baseDir`: where relative tokenFile and certificate paths start (the kubeconfig's directory). */
  constructor(config: AdmissionKubeconfig = {}, baseDir = process.cwd()) {
    this.baseDir = baseDir;
    // As clientcmd's conversion: a later entry of the same name replaces an earlier one.
    for (const entry of config.users ?? []) this.users.set(entry.name, entry.user ?? {});
    const context = (config.contexts ?? []).find((c) => c.name === config['current-context']);
    this.currentUser = config['current-context'] ? context?.context?.user || undefined : undefined;
  }

  /**
   * From a kubeconfig file (read once, as kube-apiserver reads it at start-up) or an object of the
   * same shape. A missing or malformed file is an error: kube-apiserver would not start.
   */
  static load(source: string | AdmissionKubeconfig | undefined): WebhookAuthResolver {
    if (source === undefined) return new WebhookAuthResolver();
    if (typeof source !== 'string') return new WebhookAuthResolver(validated(source, 'admissionKubeconfig'));
    const path = resolve(source);
    let parsed: unknown;
    try {
      parsed = parse(readPath(path));
    } catch (error) {
      throw new Error(`admission kubeconfig ${path}: ${(error as Error).message}`, { cause: error });
    }
    return new WebhookAuthResolver(validated(parsed ?? {}, `admission kubeconfig ${path}`), dirname(path));
  }

  /** The kubeconfig user kube-apiserver would pick for a webhook at `target` (host:port); undefined: anonymous. */
  userFor(target: string): string | undefined {
    for (const name of [...candidateNames(target), '*']) if (this.users.has(name)) return name;
    return this.currentUser !== undefined && this.users.has(this.currentUser) ? this.currentUser : undefined;
  }

  /**
   * The credentials for a call to `url`. Files are read at every call (kube-apiserver re-reads a
   * tokenFile at most once a minute). Throws, like building kube-apiserver's webhook client fails,
   * on an unreadable file, an auth provider, an exec plugin, or both a token and a password.
   */
  credentialsFor(url: URL): WebhookCredentials {
    const user = this.userFor(webhookTarget(url));
    if (user === undefined) return { headers: {} };
    const info = this.users.get(user)!;
    if (info['auth-provider']) throw new Error('auth provider not supported');
    if (info.exec) throw new Error('exec credential plugins are not run by kube-sim');
    const path = (p: string): string => (isAbsolute(p) ? p : resolve(this.baseDir, p));
    const token = info.token || (info.tokenFile ? readPath(path(info.tokenFile)).trim() : '');
    const basic = Boolean(info.username || info.password);
    if (token && basic) throw new Error('username/password or bearer token may be set, but not both');
    const credentials: WebhookCredentials = { user, headers: {} };
    if (token) credentials.headers.Authorization = `Bearer ${token}`;
    if (basic) credentials.headers.Authorization = `Basic ${Buffer.from(`${info.username ?? ''}:${info.password ?? ''}`).toString('base64')}`;
    const pem = (data: string | undefined, file: string | undefined): string | undefined =>
      data ? Buffer.from(data, 'base64').toString('utf8') : file ? readPath(path(file)) : undefined;
    const cert = pem(info['client-certificate-data'], info['client-certificate']);
    const key = pem(info['client-key-data'], info['client-key']);
    if (cert !== undefined) credentials.cert = cert;
    if (key !== undefined) credentials.key = key;
    return credentials;
  }
}

function validated(config: unknown, where: string): AdmissionKubeconfig {
  if (typeof config !== 'object' || config === null || Array.isArray(config)) throw new Error(`${where}: not a kubeconfig (expected a mapping)`);
  const users = (config as AdmissionKubeconfig).users;
  if (users !== undefined && users !== null) {
    if (!Array.isArray(users)) throw new Error(`${where}: users must be a list`);
    for (const [i, u] of users.entries()) {
      if (typeof u?.name !== 'string' || u.name === '') throw new Error(`${where}: users[${i}].name must be a non-empty string`);
    }
  }
  return config as AdmissionKubeconfig;
}
