// Admission-time checks of an Organization, each problem with the path of the field at fault.
// The one rule that needs the other Organizations (a user is default in at most one) takes them
// as an argument, read fresh by the caller.
import { isRecord, isStringMap, unknownFieldProblems, type JsonRecord } from '../render/json.ts';
import { dns1123LabelErrors, dns1123SubdomainErrors, labelValueErrors } from '../render/names.ts';
import { childPath, ROOT_PATH } from '../render/path.ts';
import { API_VERSION, type ValidationProblem } from '../render/types.ts';
import { SUBJECT_KINDS } from '../kube/types.ts';
import type { Organization } from './types.ts';
import { organizationName } from './types.ts';

const SPEC_FIELDS = new Set(['members', 'namespaceQuota', 'billing']);
const MEMBER_FIELDS = new Set(['kind', 'name', 'namespace', 'default']);

const problem = (path: string, message: string): ValidationProblem => ({ path, message });

function nameProblems(name: unknown): ValidationProblem[] {
  if (typeof name !== 'string' || name === '') return [problem('metadata.name', 'Required value')];
  // The name is the value of label furnish.dev/organization and the organization's Group name.
  return [...dns1123SubdomainErrors(name, 63), ...labelValueErrors(name)].slice(0, 1).map((m) => problem('metadata.name', `"${name}": ${m} (it is the value of label furnish.dev/organization)`));
}

function memberProblems(member: unknown, path: string): ValidationProblem[] {
  if (!isRecord(member)) return [problem(path, 'must be an object { kind, name, namespace?, default? }')];
  const problems = unknownFieldProblems(member, MEMBER_FIELDS, path);
  const { kind, name, namespace } = member;
  if (!(SUBJECT_KINDS as readonly unknown[]).includes(kind)) {
    problems.push(problem(childPath(path, 'kind'), `Unsupported value: ${JSON.stringify(kind ?? null)}: supported values: ${SUBJECT_KINDS.map((k) => `"${k}"`).join(', ')}`));
  }
  if (typeof name !== 'string' || name.trim() === '') problems.push(problem(childPath(path, 'name'), 'Required value: a non-empty string'));
  if (kind === 'ServiceAccount') {
    if (typeof namespace !== 'string' || namespace === '') problems.push(problem(childPath(path, 'namespace'), 'Required value: the ServiceAccount\'s namespace'));
    else problems.push(...dns1123LabelErrors(namespace).map((m) => problem(childPath(path, 'namespace'), `"${namespace}": ${m}`)));
    if (typeof name === 'string' && name !== '') problems.push(...dns1123SubdomainErrors(name).map((m) => problem(childPath(path, 'name'), `"${name}": ${m}`)));
  } else if (namespace !== undefined) {
    problems.push(problem(childPath(path, 'namespace'), `only a ServiceAccount member has a namespace, not a ${String(kind)}`));
  }
  if (member.default !== undefined && typeof member.default !== 'boolean') problems.push(problem(childPath(path, 'default'), `must be true or false, found ${JSON.stringify(member.default)}`));
  else if (member.default === true && kind !== 'User') problems.push(problem(childPath(path, 'default'), `only a User may have a default organization, not a ${String(kind)}`));
  return problems;
}

const memberKey = (m: JsonRecord): string => `${String(m.kind)}/${String(m.namespace ?? '')}/${String(m.name)}`;

function membersProblems(members: unknown): ValidationProblem[] {
  const path = 'spec.members';
  if (members === undefined || members === null) return [];
  if (!Array.isArray(members)) return [problem(path, 'must be a list of members')];
  const first = new Map<string, number>();
  return members.flatMap((m, i) => {
    const at = childPath(path, i);
    const problems = memberProblems(m, at);
    if (!isRecord(m)) return problems;
    const key = memberKey(m);
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, i);
    else problems.push(problem(at, `duplicates ${childPath(path, earlier)}; list each member once`));
    return problems;
  });
}

function quotaProblems(quota: unknown): ValidationProblem[] {
  if (quota === undefined || quota === null) return [];
  if (typeof quota === 'number' && Number.isSafeInteger(quota) && quota >= 0) return [];
  return [problem('spec.namespaceQuota', `must be a non-negative integer, found ${JSON.stringify(quota)}`)];
}

function billingProblems(billing: unknown): ValidationProblem[] {
  if (billing === undefined || billing === null || isStringMap(billing)) return [];
  if (!isRecord(billing)) return [problem('spec.billing', 'must be a map of string to string')];
  return Object.entries(billing)
    .filter(([, v]) => typeof v !== 'string')
    .map(([k, v]) => problem(childPath('spec.billing', k), `must be a string, found ${JSON.stringify(v)} (quote it in YAML)`));
}

/** A User marked default here who is already default in another organization. */
function defaultProblems(members: unknown, name: string, others: readonly Organization[]): ValidationProblem[] {
  if (!Array.isArray(members)) return [];
  return members.flatMap((m, i) => {
    if (!isRecord(m) || m.kind !== 'User' || m.default !== true || typeof m.name !== 'string') return [];
    const other = others.find((o) => organizationName(o) !== name && (o.spec?.members ?? []).some((x) => x.kind === 'User' && x.name === m.name && x.default === true));
    if (!other) return [];
    return [problem(childPath(childPath('spec.members', i), 'default'), `user "${m.name}" is already default in organization "${organizationName(other)}": a user has at most one default organization (set default: false here, or remove it there)`)];
  });
}

/** Every problem of an Organization; `others` are the cluster's other Organizations, read fresh. */
export function validateOrganization(obj: unknown, others: readonly Organization[] = []): ValidationProblem[] {
  if (!isRecord(obj)) return [problem(ROOT_PATH, 'must be an object (an Organization)')];
  const problems: ValidationProblem[] = [];
  if (obj.apiVersion !== API_VERSION) problems.push(problem('apiVersion', `must be "${API_VERSION}", found ${JSON.stringify(obj.apiVersion ?? null)}`));
  if (obj.kind !== 'Organization') problems.push(problem('kind', `must be "Organization", found ${JSON.stringify(obj.kind ?? null)}`));
  const meta = isRecord(obj.metadata) ? obj.metadata : {};
  problems.push(...nameProblems(meta.name));
  const spec = obj.spec ?? {};
  if (!isRecord(spec)) return [...problems, problem('spec', 'must be an object')];
  problems.push(
    ...unknownFieldProblems(spec, SPEC_FIELDS, 'spec'),
    ...membersProblems(spec.members),
    ...quotaProblems(spec.namespaceQuota),
    ...billingProblems(spec.billing),
    ...defaultProblems(spec.members, typeof meta.name === 'string' ? meta.name : '', others),
  );
  return problems;
}

/** Whether a change to an Organization can make a user default in a second one (then others are read). */
export function marksDefaultUsers(obj: unknown): boolean {
  return isRecord(obj) && isRecord(obj.spec) && Array.isArray(obj.spec.members) && obj.spec.members.some((m) => isRecord(m) && m.default === true);
}

/**
 * Why an Organization may not be deleted now, or undefined: it still has live namespaces (a
 * deleted one would keep them labelled, billed and unmovable) or namespace creates holding a
 * slot. `namespaces` are its live (not terminating) namespaces' names, read fresh.
 */
export function deletionRefusal(name: string, namespaces: readonly string[], reservations: number): string | undefined {
  if (namespaces.length === 0 && reservations === 0) return undefined;
  const shown = namespaces.slice(0, 5).join(', ') + (namespaces.length > 5 ? `, and ${namespaces.length - 5} more` : '');
  const held = namespaces.length > 0
    ? `it still has ${namespaces.length} namespace${namespaces.length === 1 ? '' : 's'} (${shown})`
    : `${reservations} namespace create${reservations === 1 ? ' is' : 's are'} in flight`;
  return `Organization "${name}" may not be deleted: ${held}; move each to another organization (kubectl label namespace <name> furnish.dev/organization=<other> --overwrite, or relabel its LNamespace) or delete it, then delete the Organization`;
}
