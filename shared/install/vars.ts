// The values of infra/'s `${FURNISH_*}` template variables for one cluster. With Terraform they
// come from one place, its output install_vars (`terraform output -json install_vars | jq .prod`):
// the topic names carry its name_prefix, the relay's Google identity is the account it created, and
// on GKE the users the functions authenticate as are the accounts it created for them. A
// flag that says otherwise is an error, never a silent override: the two would drift apart.
import { PATH_CREDENTIAL_PATTERN, PATH_CREDENTIAL_RULE } from '../auth/path-credential.ts';
import { parseSetting, SETTINGS, type SettingName } from '../config/settings.ts';
import { IDENTITY_VARS } from './manifests.ts';

/** The topic variables of the relay's manifest, each with the setting the relay reads it as. */
export const TOPIC_VARS = {
  FURNISH_TOPIC_NAMESPACES: 'topicNamespaces',
  FURNISH_TOPIC_TEMPLATES: 'topicTemplates',
  FURNISH_TOPIC_LNAMESPACES: 'topicLnamespaces',
  FURNISH_TOPIC_BILLING: 'topicBilling',
} as const satisfies Record<string, SettingName>;

export type InstallVars = Record<string, string>;

/**
 * The cluster's path credential (managed control planes), which Terraform generated: `furnish
 * install` puts it in the webhooks' URLs as `--credential-env` would. A secret: install_vars is a
 * sensitive output, read with `--vars <(terraform output -json install_vars | jq .prod)`, and
 * the value is never printed.
 */
export const PATH_CREDENTIAL_VAR = 'FURNISH_PATH_CREDENTIAL';

/**
 * The policy settings of the cluster's entry in the webhooks' configuration (JSON: guard,
 * trustedCreators, organizations, ...), which Terraform also writes there: the in-tree policies and
 * matchConditions `furnish install` renders must name the principals the webhooks name.
 */
export const POLICY_SETTINGS_VAR = 'FURNISH_POLICY_SETTINGS';

const VARIABLE = /^FURNISH_[A-Z0-9_]+$/;
/** The e-mail of a user-managed Google service account: what GKE names a Google-token caller. */
const GOOGLE_SERVICE_ACCOUNT = /^[a-z][a-z0-9-]{4,28}[a-z0-9]@[a-z][a-z0-9-]{4,28}[a-z0-9]\.iam\.gserviceaccount\.com$/;

/**
 * A vars file: one JSON object of `FURNISH_*` names to strings, holding every topic variable, each
 * judged by the relay's own parser (an empty topic is refused, an empty billing topic turns billing
 * off), so that a file is accepted exactly when the relay would accept its values. `where` names
 * the file in each error.
 */
export function parseInstallVars(text: string, where: string): InstallVars {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    // Only where: the parser's message quotes the text around the error, which may be the path credential.
    const at = /position (\d+)/.exec((e as Error).message)?.[1];
    // eslint-disable-next-line preserve-caught-error -- the cause would carry that text along
    throw new Error(`${where}: not JSON${at === undefined ? '' : ` (at character ${at})`}; expected \`terraform output -json install_vars | jq .<cluster>\``);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`${where}: expected one JSON object of FURNISH_* variables (one cluster's entry of terraform output install_vars), got ${Array.isArray(parsed) ? 'an array' : JSON.stringify(parsed)}`);
  }
  const vars: InstallVars = {};
  for (const [name, value] of Object.entries(parsed)) {
    if (!VARIABLE.test(name)) throw new Error(`${where}: ${JSON.stringify(name)} is not a FURNISH_* variable name (is this the whole output rather than one cluster's entry?)`);
    if (typeof value !== 'string') throw new Error(`${where}: ${name}: expected a string, got ${JSON.stringify(value)}`);
    vars[name] = value;
  }
  const missing = Object.keys(TOPIC_VARS).filter((name) => vars[name] === undefined);
  if (missing.length > 0) throw new Error(`${where}: lacks ${missing.join(', ')}: the relay would publish to topics Terraform did not create`);
  for (const [name, setting] of Object.entries(TOPIC_VARS)) parseSetting(setting, vars[name]!, `${where}: ${name}`);
  const credential = vars[PATH_CREDENTIAL_VAR];
  if (credential !== undefined && !PATH_CREDENTIAL_PATTERN.test(credential)) throw new Error(`${where}: ${PATH_CREDENTIAL_VAR} ${PATH_CREDENTIAL_RULE}`);
  for (const name of Object.keys(IDENTITY_VARS)) {
    const user = vars[name];
    if (user && !GOOGLE_SERVICE_ACCOUNT.test(user)) throw new Error(`${where}: ${name}: expected a Google service account's e-mail (NAME@PROJECT.iam.gserviceaccount.com), the user GKE authenticates the function as, got ${JSON.stringify(user)}`);
  }
  return vars;
}

/** Without a vars file: the settings' default topics, which are those of Terraform's default name_prefix `furnish`. */
export function defaultTopicVars(): InstallVars {
  return Object.fromEntries(Object.entries(TOPIC_VARS).map(([name, setting]) => [name, SETTINGS[setting].default]));
}

/** How agreedValue compares a flag with the file's value and shows each in its error. */
export interface Comparison {
  key(value: string): string;
  shown(value: string): string;
}

/** Values compared and shown as they are. */
const AS_GIVEN: Comparison = { key: (v) => v, shown: (v) => JSON.stringify(v) };

/**
 * One value given both as a flag and in the vars file: the flag fills what the file lacks (or
 * leaves empty); where both say something they must agree, as `as` compares them. Undefined when
 * neither says anything.
 */
export function agreedValue(option: string, flag: string | undefined, variable: string, vars: Readonly<InstallVars>, where: string, as: Comparison = AS_GIVEN): string | undefined {
  const fromFile = vars[variable] || undefined;
  if (flag !== undefined && fromFile !== undefined && as.key(flag) !== as.key(fromFile)) {
    throw new Error(`--${option} ${as.shown(flag)} contradicts ${variable}=${as.shown(fromFile)} in ${where}: drop the flag, or give the vars of that deployment`);
  }
  return flag ?? fromFile;
}
