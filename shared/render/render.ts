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
import { renderHash } from './hash.ts';
import { cloneJson } from './json.ts';
import { formatGroupKind, groupOf, objectKey } from './kinds.ts';
import { byTemplateName, templateName } from './match.ts';
import { childPath } from './path.ts';
import { annotationValue, substituteTokens, tokenValues, type TokenValues } from './tokens.ts';
import type { GroupKind, NamespaceTemplate, RenderContext, RenderedObject, RenderProblem, RenderResult, ValidationProblem } from './types.ts';
import { renderedObjectProblems, templateProblems } from './validate.ts';

interface Target {
  template: string;
  namespace: string;
  values: TokenValues;
  applySetId: string;
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
function hashContext(target: Target): Record<string, string> {
  const { CREATOR, NAMESPACE, ORGANIZATION } = target.values;
  return { template: target.template, namespace: target.namespace, applySetId: target.applySetId, CREATOR, NAMESPACE, ORGANIZATION };
}

function renderObject(raw: KubeObject, path: string, target: Target): { object: RenderedObject; problems: ValidationProblem[] } {
  const substituted = cloneJson(raw, (s) => substituteTokens(s, target.values)) as KubeObject;
  const placed = placeInNamespace(substituted, target);
  const problems = [...namespaceProblems(raw, substituted, target.namespace, path), ...renderedObjectProblems(raw, placed, path, false), ...emptyTokenProblems(raw, target.values, path)];
  const key = objectKey(groupKindOf(placed), target.namespace, placed.metadata.name ?? '');
  const hash = problems.length === 0 ? renderHash(raw, hashContext(target), (key, fallback) => annotationValue(target.values.annotations, key, fallback)) : '';
  return { object: { template: target.template, key, hash, object: placed }, problems };
}

function renderTemplate(template: NamespaceTemplate, ctx: RenderContext, values: TokenValues, id: string): TemplateRender {
  const invalid = templateProblems(template);
  if (invalid.length > 0) return { ok: false, problems: [...invalid] };
  const target: Target = { template: templateName(template), namespace: ctx.namespace, values, applySetId: id };
  const objects: RenderedObject[] = [];
  const problems: ValidationProblem[] = [];
  (template.spec.templates ?? []).forEach((raw, i) => {
    const rendered = renderObject(raw, childPath('spec.templates', i), target);
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
  return { objects, warnings, problems, parent: applySetParent(ctx.namespace, objects.map((o) => groupKindOf(o.object))) };
}
