// `furnish install` / `furnish uninstall`: the cluster side of a deployment in one command that
// cannot lock anyone out (shared/install/install.ts says how).
import { createKubeClient, type Connection, type KubeClient } from '../kube/client.ts';
import { install, InstallError, uninstall, type Installed } from '../install/install.ts';
import { progressLogger, PROGRESS_FORMATS, type ProgressFormat } from '../install/progress.ts';
import { imageReferenceProblem } from '../install/plan.ts';
import { PROBE_USER } from '../install/probes.ts';
import type { InstallVars } from '../install/vars.ts';
import { CliError, type CliIo, type Command, EXIT, type OptionSpec, type OptionValues, requiredString, stringOption, UsageError } from './command.ts';
import { agreedOptions, readVarsOption, varsOption } from './vars-option.ts';
import { CLUSTER_OPTIONS, clusterConnection, POLICY_CONFIG_OPTION, policySettingsOption, policySettingsSource, REGISTRATION_OPTIONS, REGISTRATION_VARS, registrationOptions } from './webhooks-command.ts';

const DEFAULT_TIMEOUT_SECONDS = 120;

const OUTPUT_OPTION = { type: 'string', short: 'o', value: PROGRESS_FORMATS.join('|'), description: 'progress as text lines (default) or JSON lines, on stderr; with json the result on stdout is one JSON object' } as const satisfies OptionSpec;

function timeoutSeconds(values: OptionValues): number {
  const text = stringOption(values, 'timeout');
  if (text === undefined) return DEFAULT_TIMEOUT_SECONDS;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--timeout: a whole number of seconds, at least 1, got ${JSON.stringify(text)}`);
  return n;
}

function relayImage(values: OptionValues): string {
  const image = requiredString(values, 'relay-image');
  const problem = imageReferenceProblem(image);
  if (problem) throw new UsageError(`--relay-image: ${problem}`);
  return image;
}

/** The same connection, impersonating PROBE_USER (the installer's identity must hold `impersonate`). */
function impersonating(conn: Connection, user: string): Connection {
  return { ...conn, headers: async () => ({ ...(await conn.headers()), 'impersonate-user': user }) };
}

const client = (conn: Connection): KubeClient => createKubeClient(conn, { timeoutMs: 15_000, userAgent: 'furnish-install' });

function progressFormat(values: OptionValues): ProgressFormat {
  const format = stringOption(values, 'output') ?? 'text';
  if (!(PROGRESS_FORMATS as readonly string[]).includes(format)) throw new UsageError(`--output: "${format}" is not one of ${PROGRESS_FORMATS.join(', ')}`);
  return format as ProgressFormat;
}

/** Progress on stderr (stdout holds the result): text lines, or JSON lines with -o json. */
function logTo(io: CliIo, values: OptionValues) {
  return progressLogger(progressFormat(values), (line) => io.stderr(line));
}

/** What install cannot run without, each from its flag or the vars file (--vars FILE gives the first three). */
const INSTALL_NEEDS = ['url', 'cluster', 'project', 'relay-image'] as const;

/** Every value install lacks, said at once (a flag or the vars file may give it). */
function checkInstallNeeds(options: OptionValues): void {
  const missing = INSTALL_NEEDS.filter((name) => !stringOption(options, name));
  if (missing.length > 0) throw new UsageError(`missing ${missing.map((m) => `--${m}`).join(', ')} (--url, --cluster and --project may come from --vars; see furnish install --help)`);
}

/** The flags and the vars file, reconciled: what both name must agree (install_vars is the one source). */
function installValues(values: OptionValues, io: CliIo): { options: OptionValues; vars: InstallVars; where: string } {
  const file = readVarsOption(values, io);
  const options = agreedOptions(values, file, { ...REGISTRATION_VARS, project: 'FURNISH_PROJECT', 'relay-service-account': 'FURNISH_RELAY_SERVICE_ACCOUNT' });
  checkInstallNeeds(options);
  const project = requiredString(options, 'project');
  return {
    options,
    where: file.where,
    vars: {
      ...file.vars,
      FURNISH_RELAY_IMAGE: relayImage(values),
      FURNISH_CLUSTER_ID: requiredString(options, 'cluster'),
      FURNISH_PROJECT: project,
      FURNISH_RELAY_SERVICE_ACCOUNT: stringOption(options, 'relay-service-account') ?? `furnish-relay@${project}.iam.gserviceaccount.com`,
    },
  };
}

export async function runInstall(values: OptionValues, io: CliIo): Promise<number> {
  const log = logTo(io, values);
  const { options, vars, where } = installValues(values, io);
  const registration = registrationOptions(options, io.env, { vars, where });
  const settings = policySettingsOption(values, { vars, where });
  const timeoutMs = timeoutSeconds(values) * 1000;
  const conn = await clusterConnection(values);
  const kube = client(conn);
  const probeKube = client(impersonating(conn, PROBE_USER));
  let installed: Installed;
  // Ctrl-C: stop at the next step and undo; a second one ends the process at once (the default, once this listener is gone).
  const interrupt = new AbortController();
  const onInterrupt = () => {
    log.log('WARNING', 'interrupted: undoing what this install wrote (interrupt again to stop at once, leaving the cluster as it is)');
    interrupt.abort();
  };
  process.once('SIGINT', onInterrupt);
  try {
    installed = await install({ kube, probeKube, log }, { registration, settings, settingsSource: policySettingsSource(values, { vars, where }), vars, timeoutMs, skipReachability: values['skip-reachability'] === true, signal: interrupt.signal });
  } catch (e) {
    if (e instanceof InstallError && progressFormat(values) === 'json') io.stdout(`${JSON.stringify({ installed: false, server: conn.server, error: e.message })}\n`);
    if (e instanceof InstallError) throw new CliError(e.message);
    throw e;
  } finally {
    process.off('SIGINT', onInterrupt);
    kube.close();
    probeKube.close();
  }
  const { ignored, inTree } = installed;
  if (progressFormat(values) === 'json') {
    io.stdout(`${JSON.stringify({ installed: true, server: conn.server, inTreePolicies: inTree, failOpen: ignored })}\n`);
    return EXIT.ok;
  }
  io.stdout([
    `Furnish is installed in ${conn.server}: every function answered, and the security webhooks now fail closed${ignored.length > 0 ? ', except:' : '.'}`,
    ...ignored.map(({ webhook, why }) => `  - ${webhook} stays failurePolicy Ignore (not enforced while its function does not answer): no probe, as ${why}`),
    inTree
      ? 'The API server evaluates Furnish\'s ValidatingAdmissionPolicies: their rules hold while the functions do not answer (mutate-namespace fails open, backed by them; docs/operate/enforcement.md).'
      : 'The API server has no ValidatingAdmissionPolicies: every rule is the webhooks\' (docs/operate/enforcement.md).',
    'To remove it: furnish uninstall (registrations first).',
  ].join('\n') + '\n');
  return EXIT.ok;
}

export async function runUninstall(values: OptionValues, io: CliIo): Promise<number> {
  const log = logTo(io, values);
  const conn = await clusterConnection(values);
  const kube = client(conn);
  try {
    await uninstall({ kube, log }, { crds: values.crds === true });
  } catch (e) {
    if (e instanceof InstallError) throw new CliError(e.message);
    throw e;
  } finally {
    kube.close();
  }
  io.stdout(`Furnish is removed from ${conn.server}${values.crds === true ? '' : ' (its CRDs, and the templates, Organizations and LNamespaces in them, are kept: --crds removes them)'}.\n`);
  return EXIT.ok;
}

export const installCommand: Command = {
  name: 'install',
  summary: 'Install Furnish in a cluster without locking anyone out',
  description: [
    'GET each function\'s liveness URL from this machine (a function that cannot be reached is named,',
    'with the layer that failed: DNS, TCP, TLS or HTTP status, and nothing is written). Then create',
    'Furnish\'s namespace, CRDs, RBAC and relay (infra/); where the API server evaluates',
    'ValidatingAdmissionPolicies (found by discovery), Furnish\'s policies and bindings, rendered from',
    '--config or FURNISH_POLICY_SETTINGS in --vars (it says which; those of an earlier install no longer',
    'rendered are removed), written before any registration and proven enforced by a dry run the',
    'policies must refuse (discovery alone does not say so; if not, the install fails and undoes itself),',
    'and matchConditions on the webhooks. Then register every webhook with failurePolicy',
    'Ignore, and probe each function with server-side dry runs until it answers as it must; only then',
    'does each probed security webhook fail closed (an unprobed one stays Ignore, and the install says',
    'which and why). If anything fails, the install undoes itself: it deletes what it created and',
    'writes back what existed before (a failed upgrade leaves the previous install), and says so;',
    'so does an interrupt (Ctrl-C; a second one stops at once).',
    'Exit codes: 0 installed, 1 failed (and undone), 2 usage. Progress goes to stderr.',
    'Needs cluster-admin (CRDs, RBAC, webhook registrations and policies, impersonation of the probe user).',
  ].join('\n'),
  options: {
    ...CLUSTER_OPTIONS,
    ...REGISTRATION_OPTIONS,
    vars: varsOption('cluster id, project, relay service account, topic names, functions URL, CA bundle, path credential (instead of --credential-env). Without it, the topics are furnish-* (Terraform\'s default name_prefix)'),
    config: POLICY_CONFIG_OPTION,
    project: { type: 'string', value: 'id', description: 'the GCP project of the deployment (the relay publishes to its Pub/Sub; default: from --vars)' },
    'relay-image': { type: 'string', value: 'image@sha256:…', description: 'the relay image, by digest (a tag is refused)' },
    'relay-service-account': { type: 'string', value: 'e-mail', description: 'the relay\'s Google service account (default: from --vars, else furnish-relay@<project>.iam.gserviceaccount.com)' },
    timeout: { type: 'string', value: 'seconds', description: `how long the functions have to answer the probes (default ${DEFAULT_TIMEOUT_SECONDS})` },
    'skip-reachability': { type: 'boolean', description: 'do not GET the functions from this machine first (when only the cluster\'s network reaches them); the in-cluster probes still decide' },
    output: OUTPUT_OPTION,
  },
  run: (values, io) => runInstall(values, io),
};

export const uninstallCommand: Command = {
  name: 'uninstall',
  summary: 'Remove Furnish from a cluster, webhook registrations first',
  description: 'Delete the webhook registrations first (nothing keeps calling functions that go away), then Furnish\'s in-tree policies (where the server has them), the relay, RBAC and namespace; the CRDs only with --crds.',
  options: {
    ...CLUSTER_OPTIONS,
    crds: { type: 'boolean', description: 'also delete the CRDs, and with them every NamespaceTemplate, Organization and LNamespace' },
    output: OUTPUT_OPTION,
  },
  run: (values, io) => runUninstall(values, io),
};
