// spec.variables the namespace policies share: the namespace's name and metadata maps (old and
// new, `{}` when absent), the initializer list as pendingInitializers reads it, and the requester's
// principals. Each policy lists the ones it uses.
import type { PolicySettings, PrincipalPattern } from '../config/types.ts';
import { SYSTEM_NAMESPACES } from '../keys.ts';
import { exemptNamespaces } from '../webhooks/rules/mutate-namespace.ts';
import { describeAccess } from '../kube/sar.ts';
import { GROUP } from '../render/types.ts';
import { anyPrincipal, cel, list, metadataMap, str, type Cel } from './cel.ts';

export interface Variable {
  name: string;
  expression: string;
}

/** `variables.<name>`. */
export const v = (name: string): string => `variables.${name}`;

export const NAME: Variable = { name: 'name', expression: "has(object.metadata.name) ? object.metadata.name : ''" };
export const LABELS: Variable = { name: 'labels', expression: metadataMap('object', 'labels') };
export const OLD_LABELS: Variable = { name: 'oldLabels', expression: metadataMap('oldObject', 'labels') };
export const ANNOTATIONS: Variable = { name: 'annotations', expression: metadataMap('object', 'annotations') };
export const OLD_ANNOTATIONS: Variable = { name: 'oldAnnotations', expression: metadataMap('oldObject', 'annotations') };

/** A requester-is-one-of variable. */
export function principals(name: string, patterns: readonly PrincipalPattern[]): Variable {
  return { name, expression: anyPrincipal(patterns) };
}

/**
 * Exempt by name (never by labels): kube-system and the others, the configured ones and Furnish's
 * own, as isSystemNamespace(name, exemptNamespaces(settings)) decides in the webhooks.
 */
export function exemptName(settings: PolicySettings): Variable {
  return { name: 'exempt', expression: `${v(NAME.name)} != '' && ${v(NAME.name)} in ${list([...SYSTEM_NAMESPACES, ...exemptNamespaces(settings)])}` };
}

/** A comma-separated list as pendingInitializers reads it (entries trimmed, empty ones dropped); [] when the key is absent. */
export function commaList(map: string, key: string): string {
  return `${str(key)} in ${map} ? ${map}[${str(key)}].split(',').map(s, s.trim()).filter(s, s != '') : []`;
}

/** NamespaceTemplates, on which `optout` and `use` are granted. */
export const TEMPLATES = { group: GROUP, resource: 'namespacetemplates' } as const;

/** Whether the requester holds `verb` on every NamespaceTemplate (no name: a grant limited to some names does not count). */
export function mayOnEveryTemplate(verb: string): string {
  return `authorizer.group(${str(TEMPLATES.group)}).resource(${str(TEMPLATES.resource)}).check(${str(verb)}).allowed()`;
}

/** `initialize` on one namespace: what the guard and the initializer rules ask (with the name: that namespace only). */
export const INITIALIZE_CHECK = { verb: 'initialize', group: '', resource: 'namespaces' } as const;

export function initializeAllowed(nameExpression: string): string {
  const { group, resource, verb } = INITIALIZE_CHECK;
  return `authorizer.group(${str(group)}).resource(${str(resource)}).name(${nameExpression}).check(${str(verb)}).allowed()`;
}

/** `needs verb "initialize" on namespaces, resourceName "x"` (describeAccess), the name computed. */
export function needsInitialize(nameExpression: string): (string | Cel)[] {
  return [`needs ${describeAccess(INITIALIZE_CHECK)}, resourceName "`, cel(nameExpression), '"'];
}
