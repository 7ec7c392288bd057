// The webhooks' configuration, typed: an optional file (FURNISH_CONFIG_FILE, YAML or JSON) with
// the variables of the settings table (settings.ts: each with its file path) laid over it, then
// validated at start. Every error is a ConfigError naming the setting: the variable that supplied
// the value (`FURNISH_JWT_SECRET (clusters[0].jwt.secret): must be at least 32 bytes`) or the file
// path (`FURNISH_CONFIG_FILE(/etc/furnish.yaml) clusters[1].jwt: ...`).
// In the file, `jwt.secretEnv`, `pathCredentialsEnv` and `api.tokenEnv` name environment variables
// holding the secrets (Secret Manager mounts them there), so the file itself holds none.
// NamespaceTemplates are never cached: a decision that grants reads them fresh.
import { readFileSync } from 'node:fs';
import { PATH_CREDENTIAL_PATTERN, PATH_CREDENTIAL_RULE } from '../auth/path-credential.ts';
import { readOrganizationSettings } from '../org/config.ts';
import { ConfigError, dnsLabel, Invalid, parseSetting, SETTINGS, type Parser, type Setting, type SettingName } from './settings.ts';
import { defaultPolicySettings, isWebhookName, WEBHOOKS } from './types.ts';
import type { ClusterConfig, FurnishConfig, JwtSettings, PolicySettings, WebhookName } from './types.ts';

export { ConfigError };

type Env = Record<string, string | undefined>;
type Raw = Record<string, unknown>;

const MIN_SECRET_BYTES = 32;

/** Where each value came from, so an error can name the environment variable rather than a path. */
class Sources {
  private readonly byPath = new Map<string, string>();
  private readonly origin: string;

  /** `origin` prefixes a file path in errors: `FURNISH_CONFIG_FILE(/etc/furnish.yaml)`, `--config f:`. */
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

const CLUSTER_PREFIX = 'clusters[].';

/** The table's settings a variable sets in the file's shape (the cluster id itself is handled first). */
const OVERLAID = (Object.entries(SETTINGS) as [SettingName, Setting][]).filter(([name, s]) => s.env !== undefined && s.file !== undefined && name !== 'clusterId');

function setAt(node: Raw, path: string[], value: unknown): void {
  for (const key of path.slice(0, -1)) node = (isObject(node[key]) ? node[key] : (node[key] = {})) as Raw;
  node[path.at(-1)!] = value;
}

/** The entry of cluster `id` in the file's clusters, added when absent. */
function clusterEntry(raw: Raw, id: string): { cluster: Raw; index: number } {
  const clusters = Array.isArray(raw.clusters) ? raw.clusters : (raw.clusters = []);
  let index = clusters.findIndex((c) => isObject(c) && c.id === id);
  if (index < 0) index = clusters.push({ id }) - 1;
  return { cluster: clusters[index] as Raw, index };
}

/**
 * Lays the variables of the settings table onto the raw file content, at their file paths; the
 * cluster variables set the cluster FURNISH_CLUSTER_ID (ignored without it).
 */
function overlayEnv(raw: Raw, env: Env, sources: Sources): void {
  const id = env[SETTINGS.clusterId.env];
  const entry = id === undefined ? undefined : clusterEntry(raw, id);
  if (entry) sources.set(`clusters[${entry.index}].id`, SETTINGS.clusterId.env);
  for (const [name, s] of OVERLAID) {
    const text = env[s.env!];
    if (text === undefined) continue;
    const inCluster = s.file!.startsWith(CLUSTER_PREFIX);
    if (inCluster && !entry) continue;
    const path = inCluster ? s.file!.slice(CLUSTER_PREFIX.length) : s.file!;
    const fullPath = inCluster ? `clusters[${entry!.index}].${path}` : path;
    const value = parseSetting(name, text, `${s.env!} (${fullPath})`);
    if (value === undefined) continue;
    setAt(inCluster ? entry!.cluster : raw, path.split('.'), value);
    sources.set(fullPath, s.env!);
  }
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

  /** A value checked by a parser of the settings table. */
  parsed<T>(value: string, path: string, parse: Parser<T>): T | undefined {
    try {
      return parse(value);
    } catch (e) {
      if (e instanceof Invalid) return this.fail(path, e.message);
      throw e;
    }
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
  r.parsed(id, `${at}.id`, dnsLabel);

  const jwt = readJwt(r, c, at);
  const pathCredentials = readPathCredentials(r, c, at);
  if (!jwt && pathCredentials.length === 0) r.fail(`${at}.jwt`, 'is required (secret, jwks or jwksUrl) unless pathCredentials are set');

  const apiRaw = r.object(c, 'api', `${at}.api`);
  const api = apiRaw && {
    server: r.url(apiRaw, 'server', `${at}.api.server`, true)!,
    caPem: r.string(apiRaw, 'caPem', `${at}.api.caPem`, false),
    token: r.string(apiRaw, 'token', `${at}.api.token`, false) ?? r.fromEnv(apiRaw, 'tokenEnv', `${at}.api.tokenEnv`),
    credential: readApiCredential(r, apiRaw, `${at}.api.credential`),
    timeoutMs: r.number(apiRaw, 'timeoutMs', `${at}.api.timeoutMs`, SETTINGS.apiTimeoutMs.default),
  };
  if (api?.caPem !== undefined && !api.caPem.includes('-----BEGIN CERTIFICATE-----')) r.fail(`${at}.api.caPem`, 'must be PEM (-----BEGIN CERTIFICATE-----)');
  if (api?.credential !== undefined && api.token !== undefined) r.fail(`${at}.api.credential`, 'is google, so the webhooks present their Google identity: drop api.token / api.tokenEnv');
  // A Google access token (cloud-platform scope) is a credential for all of GCP: never in clear text.
  if (api?.credential === 'google' && new URL(api.server).protocol !== 'https:') r.fail(`${at}.api.server`, `must be an https:// URL when api.credential is google (the function's Google access token is sent to it), got ${JSON.stringify(api.server)}`);

  return {
    id,
    jwt,
    pathCredentials,
    api,
    ...readPolicy(r, c, `${at}.`),
    sarCacheTtlMs: r.number(c, 'sarCacheTtlMs', `${at}.sarCacheTtlMs`, SETTINGS.sarCacheTtlMs.default, 0),
  };
}

/** `api.credential`: absent (the token, if any) or `google`. */
function readApiCredential(r: Reader, apiRaw: Raw, path: string): 'google' | undefined {
  const v = r.string(apiRaw, 'credential', path, false);
  return v === undefined ? undefined : r.parsed(v, path, SETTINGS.apiCredential.parse);
}

/** The policy part of a cluster entry (what decides, no credentials), every default filled in; `at` prefixes paths. */
function readPolicy(r: Reader, c: Raw, at: string): PolicySettings {
  const furnishNamespace = r.string(c, 'furnishNamespace', `${at}furnishNamespace`, false);
  const defaults = defaultPolicySettings(furnishNamespace);
  const guardRaw = r.object(c, 'guard', `${at}guard`) ?? {};
  return {
    systemNamespaces: r.strings(c, 'systemNamespaces', `${at}systemNamespaces`, defaults.systemNamespaces),
    autoOptOutPrincipals: r.strings(c, 'autoOptOutPrincipals', `${at}autoOptOutPrincipals`, defaults.autoOptOutPrincipals),
    guard: {
      reconciler: r.strings(guardRaw, 'reconciler', `${at}guard.reconciler`, defaults.guard.reconciler),
      systemPrincipals: r.strings(guardRaw, 'systemPrincipals', `${at}guard.systemPrincipals`, defaults.guard.systemPrincipals),
    },
    furnishNamespace: defaults.furnishNamespace,
    trustedCreators: r.strings(c, 'trustedCreators', `${at}trustedCreators`, defaults.trustedCreators),
    organizations: readOrganizationSettings(r.object(c, 'organizations', `${at}organizations`), `${at}organizations`, (path, problem) => r.fail(path, problem)),
  };
}

/**
 * Policy settings from one cluster entry of the configuration file (`furnish admit --config`):
 * read and defaulted exactly as the functions read theirs; errors name `origin` and the path.
 */
export function policySettingsFrom(raw: Raw, origin: string): PolicySettings {
  return readPolicy(new Reader(new Sources(origin), {}), raw, '');
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
  return { clusters, publicUrl, audience, audiences, maxBodyBytes: r.number(raw, 'maxBodyBytes', 'maxBodyBytes', SETTINGS.maxBodyBytes.default) };
}

/** The configuration of the running process: the file (if any) with the environment laid over it. */
export async function loadConfig(env: Env = process.env): Promise<FurnishConfig> {
  const file = env[SETTINGS.configFile.env];
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
