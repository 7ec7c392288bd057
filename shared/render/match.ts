// Which templates apply to a namespace. Each rule is a small named function; a template that
// does not apply always gets a SkipReason saying which rule excluded it.
import { KEY, SYSTEM_NAMESPACES } from '../keys.ts';
import { matchesSelector, parseSelector, type CompiledSelector, type ParsedSelector } from './selector.ts';
import type { MatchResult, NamespaceInfo, NamespaceTemplate, SkipReason } from './types.ts';

export interface MatchOptions {
  /** Namespaces never furnished, in addition to SYSTEM_NAMESPACES. */
  systemNamespaces?: readonly string[];
  /**
   * Whether the namespace's creator may use a template that requires permission (the webhook
   * answers it with a SubjectAccessReview). Default: nothing is granted.
   */
  granted?: (templateName: string) => boolean;
}

type Skip = Omit<SkipReason, 'template'>;

const nothingGranted = (): boolean => false;

export function templateName(template: NamespaceTemplate): string {
  return template.metadata.name ?? '';
}

/** Name order, by code unit (never locale-dependent): the order objects are applied and override. */
export function byTemplateName(a: NamespaceTemplate, b: NamespaceTemplate): number {
  const x = templateName(a);
  const y = templateName(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export function isSystemNamespace(namespace: string, extra: readonly string[] = []): boolean {
  return SYSTEM_NAMESPACES.includes(namespace) || extra.includes(namespace);
}

export function isOptedOut(ns: NamespaceInfo): boolean {
  return ns.annotations[KEY.optOut] === 'true';
}

export function isTemplateDisabled(template: NamespaceTemplate): boolean {
  return template.metadata.annotations?.[KEY.apply] === 'disable';
}

/**
 * Fails closed: any value but absent or "false" requires permission, so a misspelt "True"
 * (which validation refuses anyway) never opens a privileged template to everyone.
 */
export function requiresPermission(template: NamespaceTemplate): boolean {
  const value = template.metadata.annotations?.[KEY.requirePermission];
  return value !== undefined && value !== 'false';
}

const compiled = new WeakMap<object, ParsedSelector>();

/** The template's compiled selector, compiled once per selector object (templates are values). */
export function templateSelector(template: NamespaceTemplate): ParsedSelector {
  const sel: unknown = template.spec?.namespaces?.labelSelector;
  if (typeof sel !== 'object' || sel === null) return parseSelector(sel, 'spec.namespaces.labelSelector');
  let parsed = compiled.get(sel);
  if (parsed === undefined) {
    parsed = parseSelector(sel, 'spec.namespaces.labelSelector');
    compiled.set(sel, parsed);
  }
  return parsed;
}

function describeSelector(selector: CompiledSelector): string {
  return selector.text === '' ? 'everything' : `"${selector.text}"`;
}

function namespaceSkip(ns: NamespaceInfo, opts: MatchOptions): Skip | undefined {
  if (isSystemNamespace(ns.name, opts.systemNamespaces)) {
    return { code: 'system-namespace', message: `namespace "${ns.name}" is a system namespace: no template applies to it` };
  }
  if (isOptedOut(ns)) return { code: 'opted-out', message: `namespace "${ns.name}" is opted out (annotation ${KEY.optOut}: "true")` };
  return undefined;
}

/** The rules that depend on the template and the namespace's labels, before any permission. */
function selectionSkip(ns: NamespaceInfo, template: NamespaceTemplate): Skip | undefined {
  if (isTemplateDisabled(template)) return { code: 'template-disabled', message: `template is disabled (annotation ${KEY.apply}: "disable")` };
  const parsed = templateSelector(template);
  if (!parsed.ok) {
    const detail = parsed.problems.map((p) => `${p.path}: ${p.message}`).join('; ');
    return { code: 'invalid-selector', message: `template has an invalid selector, so it selects nothing: ${detail}` };
  }
  if (!matchesSelector(parsed.selector, ns.labels)) {
    return { code: 'not-selected', message: `namespace labels do not match selector ${describeSelector(parsed.selector)}` };
  }
  return undefined;
}

/**
 * `existingNamespaces: Ignore`: a namespace created before the template (by creationTimestamp,
 * whole seconds, so the same second counts as after) is not the template's to furnish. A
 * namespace being admitted has no creationTimestamp yet: it is always new.
 */
function existingSkip(ns: NamespaceInfo, template: NamespaceTemplate): Skip | undefined {
  const since = template.metadata.creationTimestamp;
  if (template.spec?.existingNamespaces !== 'Ignore' || !ns.created || !since) return undefined;
  if (Date.parse(ns.created) >= Date.parse(since)) return undefined;
  return { code: 'existed-before-template', message: `namespace was created (${ns.created}) before the template (${since}), which has existingNamespaces: Ignore` };
}

function permissionSkip(template: NamespaceTemplate, granted: (name: string) => boolean): Skip | undefined {
  const name = templateName(template);
  if (!requiresPermission(template) || granted(name)) return undefined;
  return {
    code: 'permission-required',
    message: `template requires permission (annotation ${KEY.requirePermission}: "true") and the creator may not use namespacetemplates/${name}`,
  };
}

function skipped(template: NamespaceTemplate, skip: Skip): SkipReason {
  return { template: templateName(template), ...skip };
}

/**
 * The templates that apply to `ns`, sorted by name, and a reason for each one that does not.
 * Rules in order: system namespace, opted out (both skip every template), template disabled,
 * invalid selector, not selected, existed before the template, permission required and not granted.
 */
export function matchTemplates(ns: NamespaceInfo, templates: readonly NamespaceTemplate[], opts: MatchOptions = {}): MatchResult {
  const sorted = [...templates].sort(byTemplateName);
  const nsSkip = namespaceSkip(ns, opts);
  if (nsSkip) return { matched: [], skipped: sorted.map((t) => skipped(t, nsSkip)) };
  const granted = opts.granted ?? nothingGranted;
  const result: MatchResult = { matched: [], skipped: [] };
  for (const template of sorted) {
    const skip = selectionSkip(ns, template) ?? existingSkip(ns, template) ?? permissionSkip(template, granted);
    if (skip) result.skipped.push(skipped(template, skip));
    else result.matched.push(template);
  }
  return result;
}

/** Selected templates that require permission: the ones the webhook asks a SubjectAccessReview for. */
export function templatesNeedingPermission(ns: NamespaceInfo, templates: readonly NamespaceTemplate[], opts: MatchOptions = {}): NamespaceTemplate[] {
  if (namespaceSkip(ns, opts)) return [];
  return templates.filter((t) => requiresPermission(t) && selectionSkip(ns, t) === undefined).sort(byTemplateName);
}

/**
 * UPDATE of a namespace: the templates that match the new namespace but did not match the old
 * one, under the same options. Pass `granted: () => true` to get every newly selected template,
 * then `requiresPermission` picks those the creator must be allowed to use.
 */
export function newlyMatchedTemplates(
  oldNs: NamespaceInfo,
  newNs: NamespaceInfo,
  templates: readonly NamespaceTemplate[],
  opts: MatchOptions = {},
): NamespaceTemplate[] {
  const before = new Set(matchTemplates(oldNs, templates, opts).matched);
  return matchTemplates(newNs, templates, opts).matched.filter((t) => !before.has(t));
}

