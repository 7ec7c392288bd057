// Furnish's ValidatingAdmissionPolicies as an install writes them (server with in-tree policies:
// shared/kube/features.ts): shared/policies' rendering, each policy excepting the install's probe
// user, and which live ones are Furnish's to replace or remove. Pure; install.ts does the I/O.
import { str } from '../policies/cel.ts';
import { admissionPolicies } from '../policies/index.ts';
import { POLICY_API_VERSION, POLICY_LABELS } from '../policies/policy.ts';
import type { PolicySettings } from '../config/types.ts';
import { INSTALL_FIELD_MANAGER, KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { PROBE_USER } from './probes.ts';

/** The two kinds, as they are listed and deleted. */
export const POLICY_KINDS = [
  { kind: 'ValidatingAdmissionPolicy', plural: 'validatingadmissionpolicies' },
  { kind: 'ValidatingAdmissionPolicyBinding', plural: 'validatingadmissionpolicybindings' },
] as const;

export const POLICY_API = POLICY_API_VERSION;

/** The label shared/policies sets on each policy and binding (every object of Furnish carries it). */
const PART_OF_KEY = 'app.kubernetes.io/part-of';
export const PART_OF = { key: PART_OF_KEY, value: POLICY_LABELS[PART_OF_KEY] } as const;

/**
 * The install's probes (probes.ts) must reach the webhooks they check, and the policies would
 * refuse two of them first (an opt-out and a write into a pending namespace by PROBE_USER): so
 * every policy leaves PROBE_USER's dry runs to the webhooks. Dry runs only: whoever else could
 * authenticate under that name (an authenticator's choice, not Furnish's) stores nothing past a
 * policy this way.
 */
export const PROBE_USER_CONDITION = { name: 'not-the-install-probe', expression: `!request.dryRun || !has(request.userInfo.username) || request.userInfo.username != ${str(PROBE_USER)}` };

function exceptingProbeUser(o: KubeObject): KubeObject {
  if (o.kind !== 'ValidatingAdmissionPolicy') return o;
  const spec = (o as { spec?: { matchConditions?: { name: string; expression: string }[] } }).spec ?? {};
  return { ...o, spec: { ...spec, matchConditions: [...(spec.matchConditions ?? []), PROBE_USER_CONDITION] } } as KubeObject;
}

/** What `furnish install` (and `npm start`, `furnish webhooks`) writes: the policies, then their bindings. */
export function installedPolicies(settings: PolicySettings): KubeObject[] {
  return admissionPolicies(settings).map(exceptingProbeUser);
}

const labels = (o: KubeObject): Record<string, string> => o.metadata.labels ?? {};

/** The field manager of `npm start` (scripts/local-registrations.ts). */
export const LOCAL_FIELD_MANAGER = 'furnish-local';

const managersOf = (o: KubeObject): (string | undefined)[] => ((o.metadata.managedFields ?? []) as { manager?: string }[]).map((f) => f.manager);

/**
 * Written by `npm start` and by nobody since: one of its field managers is ours, none is `furnish
 * install`'s (an install over the same names made the object its own, whatever labels it kept).
 */
export function isLocalRegistration(o: KubeObject): boolean {
  const managers = managersOf(o);
  return managers.includes(LOCAL_FIELD_MANAGER) && !managers.includes(INSTALL_FIELD_MANAGER);
}

/**
 * Live policies and bindings that are Furnish's (its label) and not a local `npm start` run's
 * alone (whose stop removes its own; one an install took over is the install's, by its field
 * manager, not by the run label it still carries) but no longer rendered, e.g. the organization
 * policies after organizations were turned off: an upgrade removes them.
 */
export function stalePolicies(live: readonly KubeObject[], rendered: readonly KubeObject[]): KubeObject[] {
  const key = (o: KubeObject) => `${o.kind}/${o.metadata.name}`;
  const wanted = new Set(rendered.map(key));
  return live.filter((o) => labels(o)[PART_OF.key] === PART_OF.value && !isLocalRegistration(o) && !wanted.has(key(o)));
}

/**
 * Discovery lists the policies whether or not the server evaluates them (kube-apiserver started
 * with --disable-admission-plugins=ValidatingAdmissionPolicy still serves the resource), so after
 * writing them the installer proves one holds: a server-side dry run, as the installer (not a
 * reconciler principal), of a namespace's phase label set to a value Furnish never writes, which
 * furnish-phase-and-ready refuses whatever the phase was (a reconciler may have furnished the
 * check's namespace meanwhile: setting `ready` again would change nothing). (The probe user's dry
 * runs pass every policy: not it.)
 */
export const ENFORCEMENT_CHECK = {
  policy: 'furnish-phase-and-ready',
  patch: { metadata: { labels: { [KEY.phase]: 'enforcement-check' } } },
} as const;

/** Why this answer to the enforcement check's dry run does not prove the policies are enforced; undefined when it does. */
export function notEnforced(answer: { ok: boolean; status: number; error?: string }): string | undefined {
  const by = `ValidatingAdmissionPolicy '${ENFORCEMENT_CHECK.policy}'`;
  if (!answer.ok && (answer.error ?? '').includes(by)) return undefined;
  const problem = answer.ok
    ? `the server admitted a dry run that ${by} refuses (its phase label set to ${ENFORCEMENT_CHECK.patch.metadata.labels[KEY.phase]} by the installer): it lists ValidatingAdmissionPolicies but does not evaluate them (is the ValidatingAdmissionPolicy admission plugin disabled?)`
    : `the dry run that ${by} refuses was answered HTTP ${answer.status} without naming it: ${answer.error ?? ''}`;
  return `${problem}; the installer's own identity must not be one of guard.reconciler's principals`;
}

/**
 * Why this answer to the enforcement check's dry run does not prove Furnish's policies lifted after
 * their removal; undefined once it is admitted (kube-apiserver compiles its policies again about
 * once a second, so a deleted one keeps refusing for about that long). Any other answer (throttled,
 * refused by something else) proves nothing either way.
 */
export function stillEnforced(answer: { ok: boolean; status: number; error?: string }): string | undefined {
  if (answer.ok) return undefined;
  return notEnforced(answer) === undefined
    ? `ValidatingAdmissionPolicy '${ENFORCEMENT_CHECK.policy}' still refuses its dry run after its removal`
    : `the dry run was answered HTTP ${answer.status}, which does not show whether the policies are lifted: ${answer.error ?? ''}`;
}
