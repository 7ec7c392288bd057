// `furnish webhooks`: the admission webhook registrations for one cluster, in either trust mode,
// and in the variant its API server supports (with in-tree policies: Furnish's policies first).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { stringify } from 'yaml';
import { PATH_CREDENTIAL_PATTERN, PATH_CREDENTIAL_RULE } from '../auth/path-credential.ts';
import { defaultPolicySettings, type PolicySettings } from '../config/types.ts';
import { connect, createKubeClient, type Connection } from '../kube/client.ts';
import { inTreePolicies } from '../kube/features.ts';
import { installedPolicies } from '../install/policies.ts';
import type { KubeObject } from '../kube/types.ts';
import { isPolicyObject } from '../install/plan.ts';
import { progressLine } from '../install/progress.ts';
import type { Severity } from '../log.ts';
import { webhookRegistrations, type RegistrationOptions } from '../webhooks/registration.ts';
import { policySettingsOf, readPolicySettings } from './policy-settings.ts';
import { PATH_CREDENTIAL_VAR, POLICY_SETTINGS_VAR, type Comparison } from '../install/vars.ts';
import { CliError, type CliIo, type Command, EXIT, type OptionSpec, type OptionValues, requiredString, stringOption, UsageError } from './command.ts';
import { agreedFlag, agreedOptions, readVarsOption, varsOption, type VarsFile } from './vars-option.ts';

/** The path credential: --credential-env's variable, or the vars file's (install_vars); both given, they must agree. Never printed. */
function pathCredential(values: OptionValues, env: CliIo['env'], file: VarsFile): { cluster: string; credential: string } | undefined {
  const variable = stringOption(values, 'credential-env');
  const fromFile = file.vars[PATH_CREDENTIAL_VAR];
  if (variable === undefined) return fromFile === undefined ? undefined : { cluster: requiredString(values, 'cluster'), credential: fromFile };
  const credential = env[variable];
  if (!credential) throw new CliError(`--credential-env: environment variable ${variable} is not set`);
  // The value is never printed in an error: it is a secret.
  if (!PATH_CREDENTIAL_PATTERN.test(credential)) throw new CliError(`--credential-env: ${variable} ${PATH_CREDENTIAL_RULE}`);
  if (fromFile !== undefined && fromFile !== credential) throw new UsageError(`--credential-env: ${variable} differs from ${PATH_CREDENTIAL_VAR} in --vars ${file.where} (neither is shown: both are secrets); drop the flag, the file has it`);
  return { cluster: requiredString(values, 'cluster'), credential };
}

function caBundle(values: OptionValues): string | undefined {
  const file = stringOption(values, 'ca-bundle');
  if (file === undefined) return undefined;
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`--ca-bundle ${file}: ${(e as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new CliError(`--ca-bundle ${file}: not a PEM certificate`);
  return Buffer.from(pem).toString('base64');
}

/** A CA bundle's PEM, whatever its line ends and surrounding whitespace (install_vars holds it base64). */
const bundlePem = (base64: string): string => Buffer.from(base64, 'base64').toString('utf8').replace(/\r\n/g, '\n').trim();

/** CA bundles (base64) compare by their PEM, and show as a short digest of it rather than kilobytes. */
const CA_BUNDLE: Comparison = {
  key: bundlePem,
  shown: (b) => `(PEM sha256:${createHash('sha256').update(bundlePem(b)).digest('hex').slice(0, 12)})`,
};

/** --ca-bundle agreed with the file's FURNISH_CA_BUNDLE (Terraform's is empty: Cloud Functions are publicly trusted). */
function agreedCaBundle(values: OptionValues, file: VarsFile): string | undefined {
  return agreedFlag('ca-bundle', caBundle(values), 'FURNISH_CA_BUNDLE', file, CA_BUNDLE);
}

/** The registration flags that install_vars also holds: option → variable (--vars). */
export const REGISTRATION_VARS = { url: 'FURNISH_FUNCTIONS_URL', cluster: 'FURNISH_CLUSTER_ID' } as const;

/**
 * What --url, --cluster, --credential-env and --ca-bundle say (shared with `furnish install`), the
 * first two already agreed with the vars file; --ca-bundle agreed with the file's CA bundle (base64,
 * as infra/ takes it), which it fills when the file has none.
 */
export function registrationOptions(values: OptionValues, env: CliIo['env'], file: VarsFile = { vars: {}, where: '' }): RegistrationOptions {
  const url = requiredString(values, 'url');
  if (!/^https:\/\/[^/]/.test(url)) throw new UsageError(`--url: kube-apiserver calls webhooks over HTTPS only, got ${JSON.stringify(url)}`);
  // Each function's name and the path credential are appended to the URL: behind a `?` or `#` they
  // would be a query or fragment, which kube-apiserver refuses, quoting them (the credential too) in its error.
  if (/[?#]/.test(url) || /^https:\/\/[^/]*@/.test(url)) throw new UsageError('--url: must be the functions\' base URL, without a query (?), a fragment (#) or user information (@), which kube-apiserver refuses in a webhook URL');
  return { functionsUrl: url, pathCredential: pathCredential(values, env, file), caBundle: agreedCaBundle(values, file) };
}

const FORMATS = ['yaml', 'json'] as const;

export const CLUSTER_OPTIONS = {
  kubeconfig: { type: 'string', value: 'file', description: 'kubeconfig of the cluster (default: $KUBECONFIG, ~/.kube/config)' },
  context: { type: 'string', value: 'name', description: 'context of the kubeconfig to use (default: its current context)' },
} as const satisfies Record<string, OptionSpec>;

export async function clusterConnection(values: OptionValues): Promise<Connection> {
  try {
    return await connect({ kubeconfigPath: stringOption(values, 'kubeconfig'), context: stringOption(values, 'context') });
  } catch (e) {
    throw new CliError(`--kubeconfig/--context: ${(e as Error).message}`);
  }
}

/** --config: the functions' policy settings (one cluster entry of their config file), as `furnish admit --config` reads them. */
export const POLICY_CONFIG_OPTION = {
  type: 'string',
  value: 'file',
  description: "policy settings (YAML or JSON): one cluster entry of the functions' config file, rendered into the in-tree policies and matchConditions (default: the functions' defaults)",
} as const satisfies OptionSpec;

/**
 * The settings the cluster's webhooks run with: --config, or Terraform's (FURNISH_POLICY_SETTINGS in
 * --vars: on GKE the reconciler is its Google service account, which the policies must name as the
 * webhooks do), or the functions' defaults. Both given, they must agree.
 */
export function policySettingsOption(values: OptionValues, file: VarsFile = { vars: {}, where: '' }): PolicySettings {
  const path = stringOption(values, 'config');
  const fromFlag = path === undefined ? undefined : readPolicySettings(path);
  const text = file.vars[POLICY_SETTINGS_VAR];
  const fromVars = text === undefined ? undefined : policySettingsOf(parseJson(text, `--vars ${file.where}: ${POLICY_SETTINGS_VAR}`), `--vars ${file.where}: ${POLICY_SETTINGS_VAR}`);
  if (fromFlag && fromVars && !isDeepStrictEqual(fromFlag, fromVars)) throw new UsageError(`--config ${path} contradicts ${POLICY_SETTINGS_VAR} in --vars ${file.where} (the settings Terraform gave the webhooks): drop --config, or give the vars of that deployment`);
  return fromFlag ?? fromVars ?? defaultPolicySettings();
}

/**
 * Which settings the in-tree variant is rendered from, as a progress line (`furnish install`,
 * `furnish webhooks`): a WARNING for the functions' defaults, since policies that name other
 * principals than the webhooks do would refuse what the webhooks allow (or the reverse).
 */
export function policySettingsSource(values: OptionValues, file: VarsFile = { vars: {}, where: '' }): { severity: Severity; message: string } {
  const path = stringOption(values, 'config');
  if (path !== undefined) return { severity: 'INFO', message: `in-tree policies rendered from --config ${path}` };
  if (file.vars[POLICY_SETTINGS_VAR] !== undefined) return { severity: 'INFO', message: `in-tree policies rendered from ${POLICY_SETTINGS_VAR} in --vars ${file.where}` };
  return { severity: 'WARNING', message: 'in-tree policies rendered from the functions\' defaults: pass --config with the cluster\'s entry of the functions\' configuration if they run with other settings: the policies and matchConditions must name the same principals and organizations as the webhooks' };
}

function parseJson(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${where}: not JSON`);
  }
}

/**
 * Which variant to print: with --kubeconfig/--context, the cluster's (discovery); otherwise the
 * webhook-only one. Never the in-tree variant offline: a server without v1 policies (1.28, 1.29
 * have matchConditions) would take its fail-open registrations and refuse the policies behind them.
 */
async function inTreeVariant(values: OptionValues): Promise<boolean> {
  if (values.kubeconfig === undefined && values.context === undefined) return false;
  const kube = createKubeClient(await clusterConnection(values), { timeoutMs: 15_000, userAgent: 'furnish-webhooks' });
  try {
    return await inTreePolicies(kube).catch((e: unknown) => {
      throw new CliError(`--kubeconfig/--context: ${(e as Error).message}`);
    });
  } finally {
    kube.close();
  }
}

const PARTS = ['policies', 'registrations'] as const;

export async function runWebhooks(values: OptionValues, io: CliIo): Promise<number> {
  const format = stringOption(values, 'output') ?? 'yaml';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--output: "${format}" is not one of ${FORMATS.join(', ')}`);
  const only = stringOption(values, 'only');
  if (only !== undefined && !(PARTS as readonly string[]).includes(only)) throw new UsageError(`--only: "${only}" is not one of ${PARTS.join(', ')}`);
  const file = readVarsOption(values, io);
  const options = registrationOptions(agreedOptions(values, file, REGISTRATION_VARS), io.env, file);
  const settings = policySettingsOption(values, file);
  const inTree = await inTreeVariant(values);
  if (only === 'policies' && !inTree) throw new UsageError('--only policies: only for a cluster that evaluates ValidatingAdmissionPolicies, asked with --kubeconfig/--context (this one was not asked, or has none)');
  if (inTree) {
    const source = policySettingsSource(values, file);
    io.stderr(progressLine(source.severity, source.message));
  }
  // The policies before the registrations they back up (kubectl apply writes in stream order).
  const all: KubeObject[] = [...(inTree ? installedPolicies(settings) : []), ...(webhookRegistrations({ ...options, ...(inTree ? { inTree: settings } : {}) }) as KubeObject[])];
  const items = only === undefined ? all : all.filter((o) => isPolicyObject(o) === (only === 'policies'));
  io.stdout(format === 'json'
    ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: {}, items }, null, 2)}\n`
    : items.map((o) => stringify(o)).join('---\n'));
  return EXIT.ok;
}

export const REGISTRATION_OPTIONS = {
  url: { type: 'string', value: 'https://…', description: 'base URL the functions are served under' },
  cluster: { type: 'string', value: 'id', description: 'the cluster id (clusters[].id of the functions\' configuration)' },
  'credential-env': { type: 'string', value: 'VAR', description: 'environment variable holding the cluster\'s path credential (path mode)' },
  'ca-bundle': { type: 'string', value: 'file', description: 'PEM of the CA of the functions\' certificate (omit for a public CA)' },
} as const satisfies Record<string, OptionSpec>;

export const webhooksCommand: Command = {
  name: 'webhooks',
  summary: 'Print the admission webhook registrations for a cluster',
  description: [
    'Print the webhook configurations of infra/webhooks for one cluster, for kubectl apply -f -.',
    'With --credential-env (managed control planes: GKE, EKS, AKS) each URL ends in',
    '/c/<cluster>/<credential>: the path credential, read from that environment variable so it never',
    'appears in a shell history; the output then holds a secret. Without it, the URLs carry nothing and',
    'kube-apiserver authenticates with the bearer JWT of its admission kubeconfig (infra/webhooks/apiserver).',
    'Only for a cluster asked with --kubeconfig/--context that evaluates ValidatingAdmissionPolicies',
    '(Kubernetes 1.30+, found by discovery) the stream starts with Furnish\'s policies and bindings, rendered',
    'from --config (or FURNISH_POLICY_SETTINGS in --vars), and the registrations carry matchConditions;',
    'mutate-namespace then fails open, backed by the policies alone. kubectl apply does not stop at an object',
    'the server refuses (it applies the rest, then exits 1), so apply that variant in two steps, the',
    'registrations only once every policy is in: --only policies | kubectl apply --server-side -f - &&',
    '--only registrations | kubectl apply --server-side -f -. furnish install does this, and also proves',
    'that the server enforces the policies (discovery alone does not say so).',
  ].join('\n'),
  options: {
    ...REGISTRATION_OPTIONS,
    ...CLUSTER_OPTIONS,
    only: { type: 'string', value: PARTS.join('|'), description: 'print only the policies and bindings (in-tree variant), or only the registrations' },
    config: POLICY_CONFIG_OPTION,
    output: { type: 'string', short: 'o', value: FORMATS.join('|'), description: 'yaml (default: a stream for kubectl apply -f -) or json (a v1 List)' }, vars: varsOption('the functions URL, the cluster id, the CA bundle and the path credential (--url, --cluster and --credential-env are then not needed)') },
  run: (values, io) => runWebhooks(values, io),
};
