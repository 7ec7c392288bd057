// `furnish webhooks`: the admission webhook registrations for one cluster, in either trust mode.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { PATH_CREDENTIAL_PATTERN, PATH_CREDENTIAL_RULE } from '../auth/path-credential.ts';
import { registrationYaml, webhookRegistrations, type RegistrationOptions } from '../webhooks/registration.ts';
import { PATH_CREDENTIAL_VAR, type Comparison } from '../install/vars.ts';
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

export function runWebhooks(values: OptionValues, io: CliIo): number {
  const format = stringOption(values, 'output') ?? 'yaml';
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--output: "${format}" is not one of ${FORMATS.join(', ')}`);
  const file = readVarsOption(values, io);
  const options = registrationOptions(agreedOptions(values, file, REGISTRATION_VARS), io.env, file);
  io.stdout(format === 'json'
    ? `${JSON.stringify({ apiVersion: 'v1', kind: 'List', metadata: {}, items: webhookRegistrations(options) }, null, 2)}\n`
    : registrationYaml(options));
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
  ].join('\n'),
  options: { ...REGISTRATION_OPTIONS, output: { type: 'string', short: 'o', value: FORMATS.join('|'), description: 'yaml (default: a stream for kubectl apply -f -) or json (a v1 List)' }, vars: varsOption('the functions URL, the cluster id, the CA bundle and the path credential (--url, --cluster and --credential-env are then not needed)') },
  run: (values, io) => runWebhooks(values, io),
};
