// What kube-apiserver's CEL compiler refuses when a policy or webhook is written, as far as
// kube-sim can tell without the kinds' schemas: syntax errors, references to variables the
// expression does not have (`authorizer` in a messageExpression, `params` without a paramKind),
// and fields `request`, `namespaceObject` and `variables` do not declare
// (BuildRequestType, BuildNamespaceType: no `request.uid`, no `namespaceObject.metadata.uid`).
// Not checked: `object`/`oldObject` fields and result types.
import { parse } from '@bufbuild/cel';

type Expr = ReturnType<typeof parse>['expr'];
/** A declared object type: its fields; `true` for anything else (strings, maps, lists, dyn). */
type Shape = true | { [field: string]: Shape };

const GVK = { group: true, version: true, kind: true } as const;
const GVR = { group: true, version: true, resource: true } as const;
const REQUEST: Shape = {
  kind: GVK, resource: GVR, subResource: true, requestKind: GVK, requestResource: GVR, requestSubResource: true, name: true,
  namespace: true, operation: true, userInfo: { username: true, uid: true, groups: true, extra: true }, dryRun: true, options: true,
};
const NAMESPACE: Shape = {
  metadata: {
    name: true, generateName: true, namespace: true, labels: true, annotations: true, UID: true, creationTimestamp: true,
    deletionGracePeriodSeconds: true, deletionTimestamp: true, generation: true, resourceVersion: true, finalizers: true,
  },
  spec: { finalizers: true },
  status: { conditions: true, phase: true },
};

/**
 * The variables each kind of expression has: a webhook's matchConditions no params or variables
 * (namespaceObject is declared there but always null); a messageExpression no authorizer; params
 * only with a paramKind.
 */
export function declarations(kind: 'policy' | 'message' | 'webhook', variableNames: string[] = [], hasParams = false): Record<string, Shape> {
  const common: Record<string, Shape> = { object: true, oldObject: true, request: REQUEST, namespaceObject: NAMESPACE };
  if (kind === 'webhook') return { ...common, authorizer: true };
  const policy: Record<string, Shape> = { ...common, ...(hasParams ? { params: true } : {}), variables: Object.fromEntries(variableNames.map((n) => [n, true])) };
  return kind === 'message' ? policy : { ...policy, authorizer: true };
}

interface Walk {
  declared: Record<string, Shape>;
  found: { offset: number; message: string }[];
  positions: Record<string, number>;
}

function shapeOf(e: Expr | undefined, scope: Set<string>, w: Walk): Shape {
  if (!e) return true;
  const at = (message: string): void => { w.found.push({ offset: w.positions[String(e.id)] ?? 0, message }); };
  const k = e.exprKind;
  switch (k.case) {
    case 'identExpr': {
      if (scope.has(k.value.name)) return true;
      const shape = w.declared[k.value.name];
      if (shape === undefined) at(`undeclared reference to '${k.value.name}' (in container '')`);
      return shape ?? true;
    }
    case 'selectExpr': {
      const operand = shapeOf(k.value.operand, scope, w);
      if (operand === true) return true;
      const field = operand[k.value.field];
      if (field === undefined) at(`undefined field '${k.value.field}'`);
      return field ?? true;
    }
    case 'callExpr':
      for (const x of [k.value.target, ...k.value.args]) shapeOf(x, scope, w);
      return true;
    case 'listExpr':
      for (const x of k.value.elements) shapeOf(x, scope, w);
      return true;
    case 'structExpr':
      for (const entry of k.value.entries) for (const x of [entry.keyKind.case === 'mapKey' ? entry.keyKind.value : undefined, entry.value]) shapeOf(x, scope, w);
      return true;
    case 'comprehensionExpr': {
      const c = k.value;
      shapeOf(c.iterRange, scope, w);
      shapeOf(c.accuInit, scope, w);
      const inner = new Set([...scope, c.iterVar, c.iterVar2, c.accuVar].filter((v) => v !== ''));
      for (const x of [c.loopCondition, c.loopStep, c.result]) shapeOf(x, inner, w);
      return true;
    }
    default:
      return true;
  }
}

/** cel-go's report: `ERROR: <input>:LINE:COL: message`, then the line and a caret. */
function report(expression: string, offset: number, message: string): string {
  const before = expression.slice(0, offset).split('\n');
  const line = before.length;
  const column = before[line - 1]!.length;
  return `ERROR: <input>:${line}:${column + 1}: ${message}\n | ${expression.split('\n')[line - 1]}\n | ${'.'.repeat(column)}^`;
}

/** The compiler's errors for an expression (one `ERROR:` per line group), or undefined when it compiles. */
export function compileErrors(expression: string, declared: Record<string, Shape>): string | undefined {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(expression);
  } catch (error) {
    return `ERROR: ${(error as Error).message}`;
  }
  const positions = Object.fromEntries(Object.entries(parsed.sourceInfo?.positions ?? {}).map(([id, offset]) => [id, Number(offset)]));
  const w: Walk = { declared, found: [], positions };
  shapeOf(parsed.expr, new Set(), w);
  return w.found.length ? w.found.map((f) => report(expression, f.offset, f.message)).join('\n') : undefined;
}
