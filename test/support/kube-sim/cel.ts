// CEL as kube-apiserver's admission plugins evaluate it (ValidatingAdmissionPolicies, webhook
// matchConditions), on @bufbuild/cel: standard CEL with the ext strings library, JSON objects as
// maps with integers as int, and the Kubernetes `authorizer` (group/resource/subresource/
// namespace/name/check(verb).allowed()/reason()/errored()/error(), path(), serviceAccount(),
// `authorizer.requestResource`) answered by the Authorize callback (kube-sim: its RBAC, exactly as
// its SubjectAccessReviews). Not here: Kubernetes' own libraries (quantity, url, ip, lists,
// regex.find...), type-checking against the kind's schema, cost budgets.
import { celEnv, celMap, celMethod, CelScalar, isCelError, parse, plan, type CelInput, type CelMap, type CelValue } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** One authorization question, as a SubjectAccessReview's resourceAttributes (or a non-resource path). */
export interface AuthorizationAttributes {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** A non-resource request (`authorizer.path('/healthz')`): group and resource are empty. */
  path?: string;
}

/** Answers an authorizer check: allowed, or allowed with the authorizer's reason. */
export type Authorize = (user: UserInfo, attributes: AuthorizationAttributes) => boolean | { allowed: boolean; reason?: string };

/** What an authorizer value stands for: the user, and how far the builder got. */
interface Check {
  user: UserInfo;
  authorize: Authorize;
  kind: 'Authorizer' | 'GroupCheck' | 'ResourceCheck' | 'PathCheck' | 'Decision';
  attributes: Partial<AuthorizationAttributes>;
  decision?: { allowed: boolean; reason: string };
}

// Authorizer values are opaque maps: only the maps made here are in this table, so CEL text
// cannot forge a check for another user.
const checks = new WeakMap<object, Check>();

function checkValue(check: Check, fields: [string, CelInput][] = []): CelMap {
  const value = celMap(new Map(fields));
  checks.set(value, check);
  return value;
}

function checkOf(target: unknown, kind: Check['kind'], method: string): Check {
  const check = typeof target === 'object' && target !== null ? checks.get(target) : undefined;
  if (check?.kind !== kind) throw new Error(`found no matching overload for '${method}'`);
  return check;
}

function step(kind: Check['kind'], method: string, next: Check['kind'], field: keyof AuthorizationAttributes | undefined) {
  return celMethod(method, CelScalar.DYN, [CelScalar.STRING], CelScalar.DYN, function (this: unknown, arg: string) {
    const check = checkOf(this, kind, method);
    if ((method === 'resource' || method === 'path') && arg.trim() === '') throw new Error(`${method} must not be empty`);
    return checkValue({ ...check, kind: next, attributes: field ? { ...check.attributes, [field]: arg } : check.attributes });
  });
}

function decide(check: Check, verb: string): CelMap {
  const attributes = { group: '', resource: '', ...check.attributes, verb } as AuthorizationAttributes;
  const answer = check.authorize(check.user, attributes);
  const decision = typeof answer === 'boolean' ? { allowed: answer, reason: '' } : { allowed: answer.allowed, reason: answer.reason ?? '' };
  return checkValue({ ...check, kind: 'Decision', decision });
}

function decisionMethod(method: string, answer: (d: { allowed: boolean; reason: string }) => boolean | string) {
  return celMethod(method, CelScalar.DYN, [], CelScalar.DYN, function (this: unknown) {
    return answer(checkOf(this, 'Decision', method).decision!);
  });
}

const SERVICE_ACCOUNT_PART = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const AUTHORIZER_FUNCS = [
  step('Authorizer', 'group', 'GroupCheck', 'group'),
  step('Authorizer', 'path', 'PathCheck', 'path'),
  step('GroupCheck', 'resource', 'ResourceCheck', 'resource'),
  step('ResourceCheck', 'subresource', 'ResourceCheck', 'subresource'),
  step('ResourceCheck', 'namespace', 'ResourceCheck', 'namespace'),
  step('ResourceCheck', 'name', 'ResourceCheck', 'name'),
  // Accepted and ignored, as on a server without the AuthorizeWithSelectors gate (kube-sim's RBAC ignores selectors anyway).
  step('ResourceCheck', 'fieldSelector', 'ResourceCheck', undefined),
  step('ResourceCheck', 'labelSelector', 'ResourceCheck', undefined),
  celMethod('check', CelScalar.DYN, [CelScalar.STRING], CelScalar.DYN, function (this: unknown, verb: string) {
    const check = checks.get(this as object);
    if (check?.kind !== 'ResourceCheck' && check?.kind !== 'PathCheck') throw new Error("found no matching overload for 'check'");
    return decide(check, verb);
  }),
  celMethod('serviceAccount', CelScalar.DYN, [CelScalar.STRING, CelScalar.STRING], CelScalar.DYN, function (this: unknown, namespace: string, name: string) {
    const check = checkOf(this, 'Authorizer', 'serviceAccount');
    if (!SERVICE_ACCOUNT_PART.test(name)) throw new Error('Invalid service account name');
    if (!SERVICE_ACCOUNT_PART.test(namespace)) throw new Error('Invalid service account namespace');
    const user = { username: `system:serviceaccount:${namespace}:${name}`, groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`] };
    return checkValue({ ...check, user });
  }),
  decisionMethod('allowed', (d) => d.allowed),
  decisionMethod('reason', (d) => d.reason),
  // kube-sim's authorizer never fails: no evaluation error to report.
  decisionMethod('errored', () => false),
  decisionMethod('error', () => ''),
];

/** The `authorizer` variable, with `authorizer.requestResource` for the request's own resource. */
export function authorizerValue(user: UserInfo, authorize: Authorize, request?: Partial<AuthorizationAttributes>): CelMap {
  const fields: [string, CelInput][] = request
    ? [['requestResource', checkValue({ user, authorize, kind: 'ResourceCheck', attributes: request })]]
    : [];
  return checkValue({ user, authorize, kind: 'Authorizer', attributes: {} }, fields);
}

/** JSON as CEL sees a Kubernetes object: maps, lists, int for whole numbers, double otherwise. */
export function toCelValue(json: unknown): unknown {
  if (Array.isArray(json)) return json.map(toCelValue);
  if (typeof json === 'number') return Number.isInteger(json) ? BigInt(json) : json;
  if (typeof json !== 'object' || json === null) return json;
  return new Map(Object.entries(json).map(([k, v]) => [k, toCelValue(v)]));
}

const ENV = celEnv({ funcs: [...strings, ...AUTHORIZER_FUNCS] });
type Program = ReturnType<typeof plan>;
const programs = new Map<string, Program | Error>();

/** The program of an expression, compiled once; a syntax error as cel-go words it (`ERROR: <input>:1:7: ...`). */
function compile(expression: string): Program | Error {
  let program = programs.get(expression);
  if (!program) {
    try {
      program = plan(ENV, parse(expression)) as Program;
    } catch (error) {
      program = new Error(`ERROR: ${(error as Error).message}`);
    }
    programs.set(expression, program);
  }
  return program;
}

/** cel-go's words where @bufbuild/cel's differ (they end up in denial messages). */
function celGoMessage(message: string): string {
  return message.replace(/^field not found: /, 'no such key: ');
}

/** Lazily evaluated, memoized entries: `variables.x` computes x at its first use, as kube-apiserver's composition. */
export class LazyMap extends Map<string, unknown> {
  private readonly pending: Map<string, () => unknown>;

  constructor(entries: [string, () => unknown][]) {
    super();
    this.pending = new Map(entries);
  }

  override get(key: string): unknown {
    if (!super.has(key) && this.pending.has(key)) super.set(key, this.pending.get(key)!());
    return super.get(key);
  }

  override has(key: string): boolean {
    return super.has(key) || this.pending.has(key);
  }
}

export type Bindings = Record<string, unknown>;

/** Evaluates an expression; an Error carries cel-go's message (a compile error: `compilation error: ...`). */
export function evaluate(expression: string, bindings: Bindings): CelValue | Error {
  const program = compile(expression);
  if (program instanceof Error) return new Error(`compilation error: ${program.message}`);
  let result: CelValue | Error;
  try {
    result = program(bindings as never);
  } catch (error) {
    result = error as Error;
  }
  return isCelError(result) || result instanceof Error ? new Error(celGoMessage(result.message)) : result;
}
