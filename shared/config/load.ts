// One typed configuration from the environment plus an optional file (YAML or JSON), validated
// at start. Every error names the setting: `FURNISH_CONFIG_FILE clusters[1].jwt.secret: must be
// at least 32 bytes`, or the environment variable that supplied the value.
//
// File (FURNISH_CONFIG_FILE):            Environment (override or add the cluster FURNISH_CLUSTER_ID):
//   publicUrl, audiences, maxBodyBytes     FURNISH_PUBLIC_URL, FURNISH_MAX_BODY_BYTES
//   audience (this function's own)         FURNISH_AUDIENCE (set per deployed function, e.g. by Terraform)
//   clusters: [{ id, jwt, pathCredentials, FURNISH_CLUSTER_ID, FURNISH_JWT_SECRET, FURNISH_JWT_JWKS,
//     api, trustedCreators, ... }]         FURNISH_PATH_CREDENTIALS, FURNISH_TRUSTED_CREATORS,
//                                          FURNISH_JWT_JWKS_URL, FURNISH_JWT_ISSUER, FURNISH_API_SERVER,
//                                          FURNISH_API_CA, FURNISH_API_TOKEN, FURNISH_SYSTEM_NAMESPACES,
//                                          FURNISH_AUTO_OPT_OUT_PRINCIPALS, FURNISH_NAMESPACE,
//                                          FURNISH_GUARD_RECONCILER, FURNISH_GUARD_SYSTEM_PRINCIPALS,
//                                          FURNISH_SAR_CACHE_TTL_MS,
//                                          FURNISH_ORGANIZATIONS (true|false), FURNISH_ORGANIZATION_PRIVILEGED,
//                                          FURNISH_ORGANIZATION_NAMESPACE_QUOTA
// In the file, `jwt.secretEnv`, `pathCredentialsEnv` and `api.tokenEnv` name environment variables
// holding the secrets (Secret Manager mounts them there), so the file itself holds none.
// NamespaceTemplates are never cached: a decision that grants reads them fresh.
import { readFileSync } from 'node:fs';
import { DEFAULT_MAX_BODY_BYTES } from '../admission/decode.ts';
import { PATH_CREDENTIAL_PATTERN, PATH_CREDENTIAL_RULE } from '../auth/path-credential.ts';
import { DEFAULT_KUBE_TIMEOUT_MS } from '../kube/http.ts';
import { readOrganizationSettings } from '../org/config.ts';
import { defaultPolicySettings, isWebhookName, WEBHOOKS } from './types.ts';
import type { ClusterConfig, FurnishConfig, JwtSettings, WebhookName } from './types.ts';

export class ConfigError extends Error {
  /** The setting at fault, as the user would look for it. */
  readonly setting: string;

  constructor(setting: string, problem: string) {
    super(`${setting}: ${problem}`);
    this.name = 'ConfigError';
    this.setting = setting;
  }
}

type Env = Record<string, string | undefined>;
type Raw = Record<string, unknown>;

const MIN_SECRET_BYTES = 32;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** Where each value came from, so an error can name the environment variable rather than a path. */
class Sources {
  private readonly byPath = new Map<string, string>();
  private readonly origin: string;

  constructor(origin: string) {
    this.origin = origin;
  }

  set(path: string, envVar: string): void {
    this.byPath.set(path, envVar);
  }

  name(path: string): string {
    const env = this.byPath.get(path);
    return env ? `${env} (${path})` : `${this.origin} ${path}`;
  }
}

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function list(text: string): string[] {
  return text.split(',').map((s) => s.trim()).filter(Boolean);
}

async function readFile(path: string): Promise<Raw> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ConfigError('FURNISH_CONFIG_FILE', `cannot read ${path}: ${(e as Error).message}`);
  }
  const json = path.endsWith('.json');
  let value: unknown;
  try {
    // YAML is parsed only when a YAML file is configured: the parser is loaded on demand.
    value = json ? JSON.parse(text) : (await import('yaml')).parse(text);
  } catch (e) {
    throw new ConfigError('FURNISH_CONFIG_FILE', `${path} is not valid ${json ? 'JSON' : 'YAML'}: ${(e as Error).message}`);
  }
  if (value === null || value === undefined) return {};
  if (!isObject(value)) throw new ConfigError('FURNISH_CONFIG_FILE', `${path} must hold a mapping`);
  return value;
}

/** Overlays the FURNISH_* variables onto the raw file content. */
function overlayEnv(raw: Raw, env: Env, sources: Sources): void {
  const top: [string, string][] = [['FURNISH_PUBLIC_URL', 'publicUrl'], ['FURNISH_AUDIENCE', 'audience'], ['FURNISH_MAX_BODY_BYTES', 'maxBodyBytes']];
  for (const [name, key] of top) {
    if (env[name] === undefined) continue;
    raw[key] = key === 'maxBodyBytes' ? Number(env[name]) : env[name];
    sources.set(key, name);
  }
  const id = env.FURNISH_CLUSTER_ID;
  if (id === undefined) return;
  const clusters = Array.isArray(raw.clusters) ? raw.clusters : (raw.clusters = []);
  let index = clusters.findIndex((c) => isObject(c) && c.id === id);
  if (index < 0) index = clusters.push({ id }) - 1;
  const cluster = clusters[index] as Raw;
  const at = (path: string) => `clusters[${index}].${path}`;
  sources.set(at('id'), 'FURNISH_CLUSTER_ID');
  const set = (name: string, path: string[], value: (s: string) => unknown) => {
    const text = env[name];
    if (text === undefined) return;
    let node = cluster;
    for (const key of path.slice(0, -1)) node = (isObject(node[key]) ? node[key] : (node[key] = {})) as Raw;
    node[path.at(-1)!] = value(text);
    sources.set(at(path.join('.')), name);
  };
  const json = (name: string) => (s: string) => {
    try {
      return JSON.parse(s) as unknown;
    } catch (e) {
      throw new ConfigError(name, `not valid JSON: ${(e as Error).message}`);
    }
  };
  set('FURNISH_JWT_SECRET', ['jwt', 'secret'], String);
  set('FURNISH_JWT_JWKS', ['jwt', 'jwks'], json('FURNISH_JWT_JWKS'));
  set('FURNISH_JWT_JWKS_URL', ['jwt', 'jwksUrl'], String);
  set('FURNISH_JWT_ISSUER', ['jwt', 'issuer'], String);
  set('FURNISH_API_SERVER', ['api', 'server'], String);
  set('FURNISH_API_CA', ['api', 'caPem'], String);
  set('FURNISH_API_TOKEN', ['api', 'token'], String);
  set('FURNISH_SYSTEM_NAMESPACES', ['systemNamespaces'], list);
  set('FURNISH_AUTO_OPT_OUT_PRINCIPALS', ['autoOptOutPrincipals'], list);
  set('FURNISH_NAMESPACE', ['furnishNamespace'], String);
  set('FURNISH_GUARD_RECONCILER', ['guard', 'reconciler'], list);
  set('FURNISH_GUARD_SYSTEM_PRINCIPALS', ['guard', 'systemPrincipals'], list);
  set('FURNISH_SAR_CACHE_TTL_MS', ['sarCacheTtlMs'], Number);
  set('FURNISH_ORGANIZATIONS', ['organizations', 'enabled'], (s) => s === 'true' || s === 'on');
  set('FURNISH_ORGANIZATION_PRIVILEGED', ['organizations', 'privileged'], list);
  set('FURNISH_ORGANIZATION_NAMESPACE_QUOTA', ['organizations', 'defaultNamespaceQuota'], Number);
  set('FURNISH_PATH_CREDENTIALS', ['pathCredentials'], list);
  set('FURNISH_TRUSTED_CREATORS', ['trustedCreators'], list);
}

/** Reads settings with checks; every failure is a ConfigError naming the setting. */
class Reader {
  private readonly sources: Sources;
  private readonly env: Env;

  constructor(sources: Sources, env: Env) {
    this.sources = sources;
    this.env = env;
  }

  fail(path: string, problem: string): never {
    throw new ConfigError(this.sources.name(path), problem);
  }

  string(obj: Raw, key: string, path: string, required: boolean): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return required ? this.fail(path, 'is required') : undefined;
    if (typeof v !== 'string' || v.trim() === '') return this.fail(path, 'must be a non-empty string');
    return v;
  }

  url(obj: Raw, key: string, path: string, required: boolean, protocols = ['https:', 'http:']): string | undefined {
    const v = this.string(obj, key, path, required);
    if (v === undefined) return undefined;
    let url: URL;
    try {
      url = new URL(v);
    } catch {
      return this.fail(path, `must be a URL, got ${JSON.stringify(v)}`);
    }
    if (!protocols.includes(url.protocol)) this.fail(path, `must be an ${protocols.join(' or ')} URL, got ${JSON.stringify(v)}`);
    return v;
  }

  number(obj: Raw, key: string, path: string, fallback: number, min = 1): number {
    const v = obj[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min) return this.fail(path, `must be an integer of at least ${min}, got ${JSON.stringify(v)}`);
    return v;
  }

  strings(obj: Raw, key: string, path: string, fallback: string[]): string[] {
    const v = obj[key];
    if (v === undefined || v === null) return fallback;
    if (!Array.isArray(v)) return this.fail(path, 'must be a list of strings');
    v.forEach((s, i) => {
      if (typeof s !== 'string' || s === '') this.fail(`${path}[${i}]`, 'must be a non-empty string');
    });
    return v as string[];
  }

  fromEnv(obj: Raw, key: string, path: string): string | undefined {
    const name = this.string(obj, key, path, false);
    if (name === undefined) return undefined;
    const value = this.env[name];
    if (value === undefined || value === '') return this.fail(path, `names environment variable ${name}, which is not set`);
    return value;
  }

  object(obj: Raw, key: string, path: string): Raw | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (!isObject(v)) return this.fail(path, 'must be a mapping');
    return v;
  }
}

function readCluster(r: Reader, raw: unknown, at: string): ClusterConfig {
  if (!isObject(raw)) r.fail(at, 'must be a mapping');
  const c = raw as Raw;
  const id = r.string(c, 'id', `${at}.id`, true)!;
  if (!DNS_LABEL.test(id)) r.fail(`${at}.id`, `must be a DNS label (lower-case letters, digits, '-'), got ${JSON.stringify(id)}`);

  const jwt = readJwt(r, c, at);
  const pathCredentials = readPathCredentials(r, c, at);
  if (!jwt && pathCredentials.length === 0) r.fail(`${at}.jwt`, 'is required (secret, jwks or jwksUrl) unless pathCredentials are set');

  const apiRaw = r.object(c, 'api', `${at}.api`);
  const api = apiRaw && {
    server: r.url(apiRaw, 'server', `${at}.api.server`, true)!,
    caPem: r.string(apiRaw, 'caPem', `${at}.api.caPem`, false),
    token: r.string(apiRaw, 'token', `${at}.api.token`, false) ?? r.fromEnv(apiRaw, 'tokenEnv', `${at}.api.tokenEnv`),
    timeoutMs: r.number(apiRaw, 'timeoutMs', `${at}.api.timeoutMs`, DEFAULT_KUBE_TIMEOUT_MS),
  };
  if (api?.caPem !== undefined && !api.caPem.includes('-----BEGIN CERTIFICATE-----')) r.fail(`${at}.api.caPem`, 'must be PEM (-----BEGIN CERTIFICATE-----)');

  const furnishNamespace = r.string(c, 'furnishNamespace', `${at}.furnishNamespace`, false);
  const defaults = defaultPolicySettings(furnishNamespace);
  const guardRaw = r.object(c, 'guard', `${at}.guard`) ?? {};
  return {
    id,
    jwt,
    pathCredentials,
    api,
    systemNamespaces: r.strings(c, 'systemNamespaces', `${at}.systemNamespaces`, defaults.systemNamespaces),
    autoOptOutPrincipals: r.strings(c, 'autoOptOutPrincipals', `${at}.autoOptOutPrincipals`, defaults.autoOptOutPrincipals),
    guard: {
      reconciler: r.strings(guardRaw, 'reconciler', `${at}.guard.reconciler`, defaults.guard.reconciler),
      systemPrincipals: r.strings(guardRaw, 'systemPrincipals', `${at}.guard.systemPrincipals`, defaults.guard.systemPrincipals),
    },
    furnishNamespace: defaults.furnishNamespace,
    trustedCreators: r.strings(c, 'trustedCreators', `${at}.trustedCreators`, defaults.trustedCreators),
    sarCacheTtlMs: r.number(c, 'sarCacheTtlMs', `${at}.sarCacheTtlMs`, 10_000, 0),
    organizations: readOrganizationSettings(r.object(c, 'organizations', `${at}.organizations`), `${at}.organizations`, (path, problem) => r.fail(path, problem)),
  };
}

function readJwt(r: Reader, c: Raw, at: string): JwtSettings | undefined {
  const jwtRaw = r.object(c, 'jwt', `${at}.jwt`);
  if (!jwtRaw) return undefined;
  const secret = r.string(jwtRaw, 'secret', `${at}.jwt.secret`, false) ?? r.fromEnv(jwtRaw, 'secretEnv', `${at}.jwt.secretEnv`);
  const secretPath = jwtRaw.secret !== undefined ? `${at}.jwt.secret` : `${at}.jwt.secretEnv`;
  if (secret !== undefined && Buffer.byteLength(secret) < MIN_SECRET_BYTES) r.fail(secretPath, `must be at least ${MIN_SECRET_BYTES} bytes`);
  const jwks = r.object(jwtRaw, 'jwks', `${at}.jwt.jwks`);
  if (jwks !== undefined && (!Array.isArray(jwks.keys) || jwks.keys.length === 0 || !jwks.keys.every(isObject))) {
    r.fail(`${at}.jwt.jwks`, 'must be a JWKS: { keys: [ <JWK>, ... ] } with at least one key');
  }
  const jwksUrl = r.url(jwtRaw, 'jwksUrl', `${at}.jwt.jwksUrl`, false);
  const kinds = [secret, jwks, jwksUrl].filter((v) => v !== undefined).length;
  if (kinds !== 1) r.fail(`${at}.jwt`, `needs exactly one of secret, jwks or jwksUrl (has ${kinds})`);
  const issuer = r.string(jwtRaw, 'issuer', `${at}.jwt.issuer`, false);
  return { secret, jwks: jwks as JwtSettings['jwks'], jwksUrl, issuer };
}

/** `pathCredentials` (or `pathCredentialsEnv`, a comma-separated list in that variable): at most two, for rotation. */
function readPathCredentials(r: Reader, c: Raw, at: string): string[] {
  const fromEnv = r.fromEnv(c, 'pathCredentialsEnv', `${at}.pathCredentialsEnv`);
  const path = fromEnv !== undefined ? `${at}.pathCredentialsEnv` : `${at}.pathCredentials`;
  const values = fromEnv !== undefined ? list(fromEnv) : r.strings(c, 'pathCredentials', path, []);
  if (values.length > 2) r.fail(path, `holds ${values.length} credentials: at most two are valid at once (the current one and the next, during a rotation)`);
  values.forEach((v, i) => {
    // The value itself is never part of a message: it is a secret.
    if (!PATH_CREDENTIAL_PATTERN.test(v)) r.fail(`${path}[${i}]`, PATH_CREDENTIAL_RULE);
  });
  return values;
}

/** Validates raw configuration (file content with the environment laid over it). */
export function configFrom(raw: Raw, env: Env = {}, sources = new Sources('configuration')): FurnishConfig {
  const r = new Reader(sources, env);
  const publicUrl = r.url(raw, 'publicUrl', 'publicUrl', false);
  const audience = r.url(raw, 'audience', 'audience', false);
  const audiencesRaw = r.object(raw, 'audiences', 'audiences') ?? {};
  const audiences: Partial<Record<WebhookName, string>> = {};
  for (const key of Object.keys(audiencesRaw)) {
    if (!isWebhookName(key)) return r.fail(`audiences.${key}`, `is not a webhook (one of ${WEBHOOKS.join(', ')})`);
    audiences[key] = r.url(audiencesRaw, key, `audiences.${key}`, true);
  }
  const clustersRaw = raw.clusters ?? [];
  if (!Array.isArray(clustersRaw)) r.fail('clusters', 'must be a list');
  const clusters = (clustersRaw as unknown[]).map((c, i) => readCluster(r, c, `clusters[${i}]`));
  if (clusters.length === 0) r.fail('clusters', 'at least one cluster is required (set FURNISH_CLUSTER_ID and FURNISH_JWT_SECRET, or FURNISH_CONFIG_FILE)');
  const seen = new Set<string>();
  clusters.forEach((c, i) => {
    if (seen.has(c.id)) r.fail(`clusters[${i}].id`, `duplicates cluster ${JSON.stringify(c.id)}`);
    seen.add(c.id);
  });
  return { clusters, publicUrl, audience, audiences, maxBodyBytes: r.number(raw, 'maxBodyBytes', 'maxBodyBytes', DEFAULT_MAX_BODY_BYTES) };
}

/** The configuration of the running process: the file (if any) with the environment laid over it. */
export async function loadConfig(env: Env = process.env): Promise<FurnishConfig> {
  const file = env.FURNISH_CONFIG_FILE;
  const raw = file ? await readFile(file) : {};
  const sources = new Sources(file ? `FURNISH_CONFIG_FILE(${file})` : 'configuration');
  overlayEnv(raw, env, sources);
  return configFrom(raw, env, sources);
}

/**
 * A webhook's token audience: its URL. In order: `audiences.<webhook>`, the deployed function's
 * own `audience` (its URL, which only the deployment knows), `<publicUrl>/<webhook>`.
 */
export function audienceFor(config: FurnishConfig, webhook: WebhookName): string {
  const explicit = config.audiences[webhook] ?? config.audience;
  if (explicit) return explicit;
  if (!config.publicUrl) throw new ConfigError('FURNISH_PUBLIC_URL (publicUrl)', `is required: the audience of ${webhook}'s tokens is its URL (or set FURNISH_AUDIENCE, or audiences.${webhook})`);
  return `${config.publicUrl.replace(/\/$/, '')}/${webhook}`;
}
