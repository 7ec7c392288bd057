// `furnish admit`: the AdmissionReview a webhook function would answer to a review, computed
// offline (shared/webhooks/offline.ts), for policy tests in CI: `--expect allowed|denied` turns
// the answer into the exit code.
import { readFileSync } from 'node:fs';
import { isAdmissionError } from '../admission/errors.ts';
import type { AdmissionReview } from '../admission/types.ts';
import { isWebhookName, WEBHOOKS, type PolicySettings, type WebhookName } from '../config/types.ts';
import type { KubeObject } from '../kube/types.ts';
import { isRecord } from '../render/json.ts';
import type { NamespaceTemplate } from '../render/types.ts';
import { validateTemplate } from '../render/validate.ts';
import { admitOffline, type AdmitOfflineOptions } from '../webhooks/offline.ts';
import { CliError, type CliIo, type Command, EXIT, type OptionValues, repeatedOption, requiredString, stringOption, UsageError } from './command.ts';
import { fileErrorMessage, formatLoadProblem, loadObjects, type SourceObject } from './load.ts';
import { readPolicySettings } from './policy-settings.ts';
import { ORGANIZATIONS_OPTION, organizationsOption } from './organizations.ts';
import { formatProblem } from './templates.ts';

const EXPECTATIONS = ['allowed', 'denied'] as const;
type Verdict = (typeof EXPECTATIONS)[number];

/** `--request -`: a pipeline may generate the review rather than keep it in a file. */
const STDIN = '-';

function webhookOption(values: OptionValues): WebhookName {
  const name = requiredString(values, 'webhook');
  if (!isWebhookName(name)) throw new UsageError(`--webhook: unknown webhook "${name}"; webhooks: ${WEBHOOKS.join(', ')}`);
  return name;
}

function expectOption(values: OptionValues): Verdict | undefined {
  const value = stringOption(values, 'expect');
  if (value === undefined) return undefined;
  if (!(EXPECTATIONS as readonly string[]).includes(value)) throw new UsageError(`--expect: "${value}" is not one of ${EXPECTATIONS.join(', ')}`);
  return value as Verdict;
}

/** Captures of kube-apiserver's calls (test/fixtures/kube-apiserver-*) wrap the review: `{ path, headers, review }`. */
function unwrapCapture(value: unknown): unknown {
  return isRecord(value) && value.kind === undefined && isRecord(value.review) ? value.review : value;
}

interface RequestInput {
  /** How messages name it: the file, or `stdin`. */
  label: string;
  value: unknown;
}

function readRequest(path: string, io: CliIo): RequestInput {
  const label = path === STDIN ? 'stdin' : path;
  let text: string;
  try {
    text = path === STDIN ? io.readStdin() : readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`--request ${label}: ${fileErrorMessage(err)}`);
  }
  if (text.trim() === '') throw new CliError(`--request ${label}: empty, expected an AdmissionReview (JSON)`);
  try {
    return { label, value: unwrapCapture(JSON.parse(text)) };
  } catch (err) {
    throw new CliError(`--request ${label}: not JSON: ${(err as Error).message}`);
  }
}

/**
 * The API server stores only templates the validate-template webhook admitted; an invalid one in
 * the cluster directory would make the answer meaningless, so it is refused with its problems.
 */
function invalidTemplateProblems(sources: readonly SourceObject[]): string[] {
  return sources
    .filter((s) => s.object.kind === 'NamespaceTemplate')
    .flatMap(({ file, where, object }) => {
      const source = { file, where, template: object as NamespaceTemplate };
      return validateTemplate(object).map((p) => formatProblem(source, p));
    });
}

interface ClusterInput {
  objects: KubeObject[];
  /** One line each, ready to print; empty when every object could be read. */
  problems: string[];
}

function loadCluster(paths: readonly string[]): ClusterInput {
  const loaded = loadObjects(paths);
  return {
    objects: loaded.items.map((s) => s.object),
    problems: [...loaded.problems.map(formatLoadProblem), ...invalidTemplateProblems(loaded.items)],
  };
}

/** A review the webhook cannot judge (malformed, or of a resource it does not handle) is the user's input at fault. */
async function answer(options: AdmitOfflineOptions, request: RequestInput): Promise<AdmissionReview> {
  try {
    return await admitOffline(options);
  } catch (err) {
    if (isAdmissionError(err)) throw new CliError(`--request ${request.label}: ${err.message}`);
    throw err;
  }
}

function verdictOf(review: AdmissionReview): Verdict {
  return review.response?.allowed === true ? 'allowed' : 'denied';
}

function checkExpectation(review: AdmissionReview, expected: Verdict, io: CliIo): number {
  const verdict = verdictOf(review);
  if (verdict === expected) return EXIT.ok;
  const message = review.response?.status?.message;
  io.stderr(`furnish admit: expected ${expected}, but the webhook ${verdict} the request${message ? `: ${message}` : ''}\n`);
  return EXIT.failed;
}

/**
 * Without --cluster every permission check is refused, and the denial reads like RBAC's own: say
 * so, or a missing flag passes for a policy decision.
 */
function noteMissingCluster(review: AdmissionReview, io: CliIo): void {
  if (verdictOf(review) === 'denied') io.stderr('furnish admit: note: no --cluster given, so every permission check was refused\n');
}

async function run(values: OptionValues, io: CliIo): Promise<number> {
  const webhook = webhookOption(values);
  const expected = expectOption(values);
  const request = readRequest(stringOption(values, 'filename') ?? requiredString(values, 'request'), io);
  const clusterPaths = repeatedOption(values, 'cluster');
  const cluster = clusterPaths.length > 0 ? loadCluster(clusterPaths) : undefined;
  if (cluster && cluster.problems.length > 0) {
    io.stderr(cluster.problems.map((line) => `${line}\n`).join(''));
    return EXIT.failed;
  }
  const configPath = stringOption(values, 'config');
  const config: PolicySettings | undefined = configPath === undefined ? undefined : readPolicySettings(configPath);
  const organizations = organizationsOption(values);
  const review = await answer({ webhook, review: request.value, cluster: cluster && { objects: cluster.objects }, config, organizations }, request);
  io.stdout(`${JSON.stringify(review, null, 2)}\n`);
  if (!cluster) noteMissingCluster(review, io);
  // As a policy tool's: a denial fails the pipeline unless --expect says it should be denied.
  if (expected === undefined) return verdictOf(review) === 'allowed' ? EXIT.ok : EXIT.failed;
  return checkExpectation(review, expected, io);
}

export const admitCommand: Command = {
  name: 'admit',
  summary: 'Print the AdmissionReview response a webhook would give to a request',
  description: [
    'Answer an AdmissionReview (admission.k8s.io/v1) as the webhook function would, offline, and',
    'print the AdmissionReview with its response as JSON: allowed or not, the denial message, the',
    'JSONPatch (base64, as kube-apiserver receives it). --request takes a bare AdmissionReview or a',
    'capture { path, headers, review }. Look-ups (NamespaceTemplates, RBAC answers) come from',
    'the objects under --cluster: NamespaceTemplates, Roles, ClusterRoles, RoleBindings and',
    'ClusterRoleBindings, NamespaceInitializationConfigurations (mutate-namespace records the',
    'initializers a new namespace gets) and Namespaces (the stored namespace guard-initializing',
    'reads); without --cluster there is no template and every permission check is refused.',
    'With --organizations, organization rules are on (membership, default organization, quota',
    'from each status). Exit 0 when the request is allowed (with --expect: when the answer is the one',
    'expected), 1 when it is denied (with --expect: when it is not the one expected) or the input is',
    'invalid, 2 on a wrong command line.',
  ].join('\n'),
  options: {
    webhook: { type: 'string', short: 'w', required: true, value: 'name', description: `webhook to ask: ${WEBHOOKS.join(', ')}` },
    request: { type: 'string', short: 'r', value: 'file|-', description: 'AdmissionReview JSON to answer ("-": stdin)' },
    filename: { type: 'string', short: 'f', value: 'file|-', description: 'the same as --request, as kubectl names the file it reads' },
    cluster: {
      type: 'string',
      multiple: true,
      value: 'file|dir',
      description: 'objects of the cluster to look up (templates, RBAC, initializer configurations, namespaces), read recursively (*.yaml, *.yml, *.json)',
    },
    config: {
      type: 'string',
      value: 'file',
      description: "policy settings (YAML or JSON): one cluster entry of the functions' config file (default: the functions' defaults)",
    },
    organizations: ORGANIZATIONS_OPTION,
    expect: { type: 'string', value: 'allowed|denied', description: 'exit 1 unless the webhook gives this answer' },
  },
  run,
};
