// The objects Furnish applies to one namespace: the matched templates' objects, tokens
// replaced, put in the namespace, labelled for the template and the ApplySet, later templates
// overriding earlier ones, each with a content hash.
//
// Rendering never throws for user input. A template that is invalid (validateTemplate) or that
// cannot be rendered for this namespace (a name that is invalid once its tokens are replaced, an
// object naming another namespace) contributes no object at all and yields RenderProblems: a
// template renders all or nothing, because half a template (a default-deny NetworkPolicy without
// the policy that lets DNS out) can be worse than none. The other templates still render; the
// reconciler records the problems as failures and keeps the namespace pending.
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { applySetId, applySetParent } from './applyset.ts';
import { emptyTokenProblems } from './empty-tokens.ts';
import { compiledObject, renderCompiled, type Placement } from './compile.ts';
import { canonicalJson, renderHash, templateHash, type TemplateHash } from './hash.ts';
import { cloneJson } from './json.ts';
import { interned } from './intern.ts';
import { formatGroupKind, groupOf, objectKey } from './kinds.ts';
import { byTemplateName, templateName } from './match.ts';
import { childPath } from './path.ts';
import { substituteTokens, tokenValues, type TokenValues } from './tokens.ts';
import type { GroupKind, NamespaceTemplate, RenderContext, RenderedObject, RenderProblem, RenderResult, ValidationProblem } from './types.ts';
import { labelValueErrors } from './names.ts';
import { renderedObjectProblems, templateProblems } from './validate.ts';

export interface Target extends Placement {
  values: TokenValues;
  /** canonicalJson(hashContext(target)), for the content hash of each object. */
  contextJson: string;
  /** Whether Furnish's two label values are valid label values (the template's name may not be, when it is invalid). */
  labelsOk: boolean;
}

type TemplateRender = { ok: true; objects: RenderedObject[] } | { ok: false; problems: ValidationProblem[] };

export function groupKindOf(object: KubeObject): GroupKind {
  return { group: groupOf(object.apiVersion), kind: object.kind };
}

function namespaceProblems(raw: KubeObject, rendered: KubeObject, namespace: string, path: string): ValidationProblem[] {
  const named = rendered.metadata.namespace;
  if (named === undefined || named === null || named === '' || named === namespace) return [];
  const from = raw.metadata.namespace === named ? '' : ` (from "${raw.metadata.namespace}")`;
  return [{ path: childPath(childPath(path, 'metadata'), 'namespace'), message: `"${named}"${from} names another namespace: the object is rendered for "${namespace}"` }];
}

/** Namespace and Furnish's labels set, metadata in the usual reading order. */
function placeInNamespace(object: KubeObject, target: Target): KubeObject {
  const { name, namespace: _ignored, labels, ...rest } = object.metadata;
  const ours = { [KEY.template]: target.template, [KEY.applySetPartOf]: target.applySetId };
  return { ...object, metadata: { name, namespace: target.namespace, labels: { ...labels, ...ours }, ...rest } };
}

/** What rendering reads besides the template object and the annotations it names. */
function hashContext(target: Placement, values: TokenValues): Record<string, string> {
  const { CREATOR, NAMESPACE, ORGANIZATION } = values;
  return { template: target.template, namespace: target.namespace, applySetId: target.applySetId, CREATOR, NAMESPACE, ORGANIZATION };
}

/** No `hash`: the object has problems and is never sent, so it has no hash. */
function renderedObject(placed: KubeObject, target: Target, groupKind: GroupKind, hash: TemplateHash | undefined): RenderedObject {
  const key = objectKey(groupKind, target.namespace, placed.metadata.name ?? '');
  return { template: target.template, key, hash: hash ? renderHash(hash, target.contextJson, target.values.annotations) : '', object: placed };
}

/** The plain way: substitute, place, check. What the compiled way falls back to, and its reference in tests. */
export function renderObjectDirectly(raw: KubeObject, index: number, target: Target): { object: RenderedObject; problems: ValidationProblem[] } {
  const path = childPath('spec.templates', index);
  const substituted = cloneJson(raw, (s) => substituteTokens(s, target.values)) as KubeObject;
  const placed = placeInNamespace(substituted, target);
  const problems = [...namespaceProblems(raw, substituted, target.namespace, path), ...renderedObjectProblems(raw, placed, path, false), ...emptyTokenProblems(raw, target.values, path)];
  return { object: renderedObject(placed, target, groupKindOf(placed), problems.length === 0 ? templateHash(raw) : undefined), problems };
}

/** Renders one template object, compiled once per object; the plain way when a check may fail. */
export function renderObject(raw: KubeObject, index: number, target: Target): { object: RenderedObject; problems: ValidationProblem[] } {
  const compiled = target.labelsOk ? compiledObject(raw) : null;
  const placed = compiled ? renderCompiled(compiled, target.values, target) : undefined;
  if (!compiled || !placed) return renderObjectDirectly(raw, index, target);
  return { object: renderedObject(placed, target, compiled.groupKind, compiled.hash), problems: [] };
}

/** What rendering for one template in one namespace needs, computed once for all its objects. */
export function renderTarget(template: string, ctx: RenderContext, values: TokenValues, id: string): Target {
  const place: Placement = { template, namespace: ctx.namespace, applySetId: id };
  const labelsOk = labelValueErrors(template).length === 0 && labelValueErrors(id).length === 0;
  return { ...place, values, contextJson: canonicalJson(hashContext(place, values)), labelsOk };
}

function renderTemplate(listed: NamespaceTemplate, ctx: RenderContext, values: TokenValues, id: string): TemplateRender {
  // A template equal to one already rendered uses that one's validation and compiled objects.
  const template = interned(listed);
  const invalid = templateProblems(template);
  if (invalid.length > 0) return { ok: false, problems: [...invalid] };
  const target = renderTarget(templateName(template), ctx, values, id);
  const objects: RenderedObject[] = [];
  const problems: ValidationProblem[] = [];
  (template.spec.templates ?? []).forEach((raw, i) => {
    const rendered = renderObject(raw, i, target);
    objects.push(rendered.object);
    problems.push(...rendered.problems);
  });
  return problems.length === 0 ? { ok: true, objects } : { ok: false, problems };
}

function describeObject(rendered: RenderedObject): string {
  return `${formatGroupKind(groupKindOf(rendered.object))}/${rendered.object.metadata.name}`;
}

function overrideWarning(earlier: RenderedObject, later: RenderedObject): string {
  const where = `in namespace "${later.object.metadata.namespace}"`;
  return `template "${later.template}" overrides ${describeObject(later)} ${where} defined by template "${earlier.template}" (the later template by name wins)`;
}

/**
 * Renders the matched templates for one namespace. Templates are taken in name order (as
 * matchTemplates returns them); an object defined again by a later template replaces the earlier
 * one, at the later position, with a warning naming both templates.
 */
export function renderNamespace(matched: readonly NamespaceTemplate[], ctx: RenderContext): RenderResult {
  const values = tokenValues(ctx);
  const id = applySetId(ctx.namespace);
  const byKey = new Map<string, RenderedObject>();
  const warnings: string[] = [];
  const problems: RenderProblem[] = [];
  for (const template of [...matched].sort(byTemplateName)) {
    const rendered = renderTemplate(template, ctx, values, id);
    if (!rendered.ok) {
      problems.push(...rendered.problems.map((p) => ({ template: templateName(template), ...p })));
      continue;
    }
    for (const object of rendered.objects) {
      const earlier = byKey.get(object.key);
      if (earlier) {
        warnings.push(overrideWarning(earlier, object));
        byKey.delete(object.key);
      }
      byKey.set(object.key, object);
    }
  }
  const objects = [...byKey.values()];
  return { objects, warnings, problems, parent: applySetParent(ctx.namespace, objects.map((o) => groupKindOf(o.object)), id) };
}
