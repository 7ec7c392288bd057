// Who the local stack's components are: the ServiceAccounts infra/ deploys them as
// (furnish-system/furnish-reconciler, furnish-webhook, furnish-relay), installed by the admin with
// exactly the RBAC infra/ grants them, each running on a token minted for it with the TokenRequest
// API. The admin's credentials only install: a component that needs a right infra/ does not grant
// fails here as it would when deployed.
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DEFAULT_FURNISH_NAMESPACE } from '../../shared/config/types.ts';
import { fillObject, loadKustomization } from '../../shared/install/manifests.ts';
import { installOrder } from '../../shared/install/plan.ts';
import { applyObject } from '../../shared/kube/api.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { Connection, Credentials } from '../../shared/kube/connection.ts';
import { knownResource } from '../../shared/kube/resources.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { Logger } from '../../shared/log.ts';
import { groupOf } from '../../shared/render/kinds.ts';

/** Each component's ServiceAccount in Furnish's namespace (infra/reconciler, infra/webhooks, infra/relay). */
export const COMPONENT_ACCOUNTS = { reconciler: 'furnish-reconciler', webhook: 'furnish-webhook', relay: 'furnish-relay' } as const;
export type Component = keyof typeof COMPONENT_ACCOUNTS;

export const serviceAccountUser = (name: string, namespace = DEFAULT_FURNISH_NAMESPACE): string => `system:serviceaccount:${namespace}:${name}`;

/** Values for infra/'s template variables in the identity objects: no Google service account locally. */
const LOCAL_VARS = { FURNISH_RELAY_SERVICE_ACCOUNT: '' };
const FIELD_MANAGER = 'furnish-local';
/** How long a minted token lives; it is minted again at half its life (TokenRequest: 10 minutes at the least). */
export const TOKEN_SECONDS = 3600;

interface Subject { kind?: string; name?: string; namespace?: string }

/**
 * infra/'s ServiceAccounts of the components, the bindings naming them, and the roles those bind,
 * in install order. Nothing else: the roles infra/ offers administrators to bind to users
 * (furnish:optout, the LNamespace requester binding of system:authenticated) are theirs to grant,
 * and the suites' users get exactly what each suite grants them.
 */
export function identityObjects(objects: readonly KubeObject[] = loadKustomization()): KubeObject[] {
  const names = new Set<string>(Object.values(COMPONENT_ACCOUNTS));
  const accounts = objects.filter((o) => o.kind === 'ServiceAccount' && o.metadata.namespace === DEFAULT_FURNISH_NAMESPACE && names.has(o.metadata.name!));
  const isComponent = (s: Subject) => s.kind === 'ServiceAccount' && s.namespace === DEFAULT_FURNISH_NAMESPACE && names.has(s.name ?? '');
  const bindings = objects.filter((o) => (o.kind === 'ClusterRoleBinding' || o.kind === 'RoleBinding') && ((o.subjects ?? []) as Subject[]).some(isComponent));
  const bound = (role: KubeObject) => bindings.some((b) => {
    const ref = b.roleRef as { kind: string; name: string };
    return ref.kind === role.kind && ref.name === role.metadata.name && (role.kind === 'ClusterRole' || b.metadata.namespace === role.metadata.namespace);
  });
  const roles = objects.filter((o) => (o.kind === 'ClusterRole' || o.kind === 'Role') && bound(o));
  return installOrder([...accounts, ...roles, ...bindings].map((o) => fillObject(o, LOCAL_VARS)));
}

/** Applies the identity objects as the installing admin (server-side apply: a restart changes only what changed). */
export async function installIdentities(kube: KubeClient, log: Logger): Promise<void> {
  for (const o of identityObjects()) {
    const info = knownResource(groupOf(o.apiVersion), o.kind);
    if (!info) throw new Error(`${o.kind}/${o.metadata.name}: not a kind the local stack installs`);
    const res = await applyObject(kube, info, o, { fieldManager: FIELD_MANAGER });
    if (!res.ok) throw new Error(`could not install ${o.kind}/${o.metadata.name} (the components' identity): ${res.error ?? `HTTP ${res.status}`}`);
  }
  log.log('INFO', 'component identities installed', { serviceAccounts: Object.values(COMPONENT_ACCOUNTS).map((n) => serviceAccountUser(n)) });
}

/** A component's credentials: its ServiceAccount's token, and nothing of the admin's. */
export interface ComponentIdentity {
  /** `system:serviceaccount:furnish-system:<name>`. */
  username: string;
  /** An inline kubeconfig whose user reads the token file the stack rewrites at each mint (connection.ts re-reads it). */
  credentials: Credentials;
  /** The token minted last. */
  token(): string;
}

export interface Identities extends Record<Component, ComponentIdentity> {
  /** The API server and its CA, as the admin's kubeconfig has them. */
  server: string;
  caPem?: string;
  /** Called after every new mint (the webhooks take their token as a value, not from a file). */
  onRenew(listener: () => void): void;
  /** No more mints (first, as the stack stops). */
  stop(): void;
  /** Deletes the token files (last, once no component reads them). */
  remove(): void;
}

/** How long tokens live, and how often they are minted again (half their life unless a test says otherwise). */
export interface TokenTiming {
  seconds?: number;
  renewEveryMs?: number;
}

interface TokenRequestAnswer {
  status?: { token?: string; expirationTimestamp?: string };
}

/** One TokenRequest for a component's ServiceAccount. */
async function mint(kube: KubeClient, name: string, seconds: number): Promise<string> {
  const res = await kube.call<TokenRequestAnswer>({
    method: 'POST', path: `/api/v1/namespaces/${DEFAULT_FURNISH_NAMESPACE}/serviceaccounts/${name}/token`,
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: seconds } },
  });
  const token = res.data?.status?.token;
  if (!res.ok || !token) throw new Error(`could not mint a token for ServiceAccount ${DEFAULT_FURNISH_NAMESPACE}/${name} (TokenRequest): ${res.error ?? `HTTP ${res.status}`}`);
  return token;
}

/** The kubeconfig of one component: the admin's server and CA, the component's token file. */
function componentKubeconfig(conn: Connection, name: string, tokenFile: string): string {
  const cluster: Record<string, unknown> = { server: conn.server };
  if (conn.tls?.ca) cluster['certificate-authority-data'] = Buffer.from(String(conn.tls.ca)).toString('base64');
  if (conn.tls?.rejectUnauthorized === false) cluster['insecure-skip-tls-verify'] = true;
  if (conn.tls?.servername) cluster['tls-server-name'] = conn.tls.servername;
  return stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': name,
    clusters: [{ name: 'local', cluster }],
    users: [{ name, user: { tokenFile } }],
    contexts: [{ name, context: { cluster: 'local', user: name } }],
  });
}

/**
 * Mints a token for each component's ServiceAccount (as the admin, who may create
 * `serviceaccounts/token`) and mints them again at half their life. The token files live in a
 * private temporary folder, removed by remove().
 */
export async function mintIdentities(kube: KubeClient, conn: Connection, log: Logger, timing: TokenTiming = {}): Promise<Identities> {
  const seconds = timing.seconds ?? TOKEN_SECONDS;
  const dir = mkdtempSync(join(tmpdir(), 'furnish-identities-'));
  const tokens = new Map<Component, string>();
  const listeners: Array<() => void> = [];
  const components = Object.keys(COMPONENT_ACCOUNTS) as Component[];
  const fileOf = (c: Component) => join(dir, `${c}.token`);
  const mintAll = async () => {
    for (const c of components) {
      const token = await mint(kube, COMPONENT_ACCOUNTS[c], seconds);
      // Renamed into place: a reader never sees half a token.
      writeFileSync(`${fileOf(c)}.new`, token, { mode: 0o600 });
      renameSync(`${fileOf(c)}.new`, fileOf(c));
      tokens.set(c, token);
    }
  };
  try {
    await mintAll();
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  // connection.ts re-reads a token file every 60 s: half a life leaves the old token valid long after that.
  let minting = false;
  const timer = setInterval(() => {
    if (minting) return;
    minting = true;
    void mintAll().then(
      () => listeners.forEach((l) => l()),
      (e: unknown) => log.log('ERROR', 'could not renew the components\' tokens: they stop working when the current ones expire', { error: (e as Error).message, expiresInSeconds: seconds / 2 }),
    ).finally(() => {
      minting = false;
    });
  }, timing.renewEveryMs ?? (seconds * 1000) / 2);
  timer.unref();
  const identity = (c: Component): ComponentIdentity => ({
    username: serviceAccountUser(COMPONENT_ACCOUNTS[c]),
    credentials: { kubeconfigYaml: componentKubeconfig(conn, COMPONENT_ACCOUNTS[c], fileOf(c)) },
    token: () => tokens.get(c)!,
  });
  log.log('INFO', 'component tokens minted', { expirationSeconds: seconds, users: components.map((c) => serviceAccountUser(COMPONENT_ACCOUNTS[c])) });
  return {
    reconciler: identity('reconciler'),
    webhook: identity('webhook'),
    relay: identity('relay'),
    server: conn.server,
    ...(conn.tls?.ca ? { caPem: String(conn.tls.ca) } : {}),
    onRenew: (l) => void listeners.push(l),
    stop: () => clearInterval(timer),
    remove() {
      clearInterval(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
