// `furnish admit --config`: the policy settings a cluster's webhooks run with, from a YAML or JSON
// file holding the keys of one cluster entry of the functions' configuration file
// (FURNISH_CONFIG_FILE), so that such an entry can be copied as it is. Read by the functions' own
// reader (config/load.ts), so defaults and errors are theirs: the guard's reconciler follows
// furnishNamespace. The FURNISH_* environment is not read: a CI run must not depend on it.
import { readFileSync } from 'node:fs';
import { policySettingsFrom } from '../config/load.ts';
import { ConfigError } from '../config/settings.ts';
import type { PolicySettings } from '../config/types.ts';
import { isRecord, type JsonRecord } from '../render/json.ts';
import { CliError } from './command.ts';
import { fileErrorMessage, formatLoadProblem, parseDocuments } from './load.ts';

const POLICY_KEYS = ['systemNamespaces', 'autoOptOutPrincipals', 'guard', 'furnishNamespace', 'organizations', 'trustedCreators'];
const GUARD_KEYS = ['reconciler', 'systemPrincipals'];
/** The rest of a cluster entry: how the functions reach and trust the cluster, nothing that decides. */
const CONNECTION_KEYS = ['id', 'jwt', 'pathCredentials', 'pathCredentialsEnv', 'api', 'sarCacheTtlMs'];

type Fail = (path: string, problem: string) => never;

/** `where` names the source in every error: `--config FILE`, or the vars file's variable. */
function failFor(where: string): Fail {
  return (path, problem) => {
    throw new ConfigError(`${where}${path ? `: ${path}` : ''}`, problem);
  };
}

/** The one mapping of the file; an empty file is an empty mapping (every default). */
function readMapping(file: string, fail: Fail): JsonRecord {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return fail('', fileErrorMessage(err));
  }
  const { items, problems } = parseDocuments(file, text);
  if (problems.length > 0) throw new CliError(`--config ${formatLoadProblem(problems[0]!)}`);
  if (items.length > 1) fail('', `holds ${items.length} documents, expected one mapping`);
  const value = items[0]?.value ?? {};
  if (!isRecord(value)) return fail('', 'must hold a mapping of policy settings');
  return value;
}

/** A typo must not fall back to a default silently. */
function checkKeys(obj: JsonRecord, known: readonly string[], path: string, fail: Fail): void {
  for (const key of Object.keys(obj)) {
    if (known.includes(key)) continue;
    // The whole functions configuration holds several clusters: which one is meant is not ours to guess.
    const hint = key === 'clusters' ? ' (give one entry of clusters, not the whole configuration)' : '';
    fail(`${path}${key}`, `is not a policy setting; settings: ${[...POLICY_KEYS, ...GUARD_KEYS.map((k) => `guard.${k}`)].join(', ')}${hint}`);
  }
}

/**
 * Complete settings (every default filled in), so nothing depends on how admitOffline merges:
 * read by the functions' own reader (config/load.ts), so a file means the same to both.
 */
export function readPolicySettings(file: string): PolicySettings {
  const where = `--config ${file}`;
  return policySettingsOf(readMapping(file, failFor(where)), where);
}

/** Policy settings from a mapping of a cluster entry's keys (a --config file's, Terraform's FURNISH_POLICY_SETTINGS), every default filled in. */
export function policySettingsOf(raw: unknown, where: string): PolicySettings {
  // Annotated: TypeScript narrows after a call to a never-returning function only then.
  const fail: Fail = failFor(where);
  if (!isRecord(raw)) return fail('', 'must hold a mapping of policy settings');
  checkKeys(raw, [...POLICY_KEYS, ...CONNECTION_KEYS], '', fail);
  const guard = raw.guard ?? {};
  if (!isRecord(guard)) fail('guard', 'must be a mapping');
  checkKeys(guard, GUARD_KEYS, 'guard.', fail);
  return policySettingsFrom(raw, `${where}:`);
}
