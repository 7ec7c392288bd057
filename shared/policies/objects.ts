// 6. The metadata of an ApplySet member written through a subresource. kube-apiserver's status
// strategies for built-in kinds keep the metadata a `/status` write sends (a ResourceQuota's
// labels, annotations and owner references; a Deployment's annotations and owner references), so
// whoever may write `resourcequotas/status` could take Furnish's quota out of its ApplySet, or give
// it an owner reference for the garbage collector to delete it by. protect-objects judges the
// objects themselves, not their subresources: it would otherwise see every write of the quota
// controller and of quota admission, and, failing closed while unreachable, stop Pod creation in
// every governed namespace. So this rule lives only here, where the server runs it itself.
import type { PolicySettings } from '../config/types.ts';
import { KEY } from '../keys.ts';
import { cel } from './cel.ts';
import { byRequester, type PolicySpec } from './policy.ts';
import { principals, v } from './variables.ts';

/** The metadata an ApplySet member keeps through a subresource: what protect-objects judges on the object, finalizers too. */
export const SUBRESOURCE_KEPT_METADATA = ['labels', 'annotations', 'ownerReferences', 'finalizers'] as const;

const EMPTY: Record<(typeof SUBRESOURCE_KEPT_METADATA)[number], string> = { labels: '{}', annotations: '{}', ownerReferences: '[]', finalizers: '[]' };

function field(object: string, name: (typeof SUBRESOURCE_KEPT_METADATA)[number]): string {
  return `has(${object}.metadata.${name}) ? ${object}.metadata.${name} : ${EMPTY[name]}`;
}

export function subresourceMetadata(settings: PolicySettings): PolicySpec {
  const changed = SUBRESOURCE_KEPT_METADATA.map((name) => `((${field('object', name)}) != (${field('oldObject', name)}) ? ['${name}'] : [])`).join(' + ');
  const target = [cel('request.kind.kind'), ' "', cel('request.name'), '" in namespace "', cel('request.namespace'), '"'];
  return {
    name: 'furnish-subresource-metadata',
    // Every subresource of every namespaced kind: those that carry the object itself (status,
    // ephemeralcontainers) are judged by what they change; a Scale carries no labels, so the
    // objectSelector leaves it out.
    resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], operations: ['UPDATE'], scope: 'Namespaced' }],
    // ApplySet members (old or new object), as protect-objects' objectSelector: every object
    // Furnish applied, and any object being made or unmade one.
    objectSelector: { matchExpressions: [{ key: KEY.applySetPartOf, operator: 'Exists' }] },
    matchConditions: [{ name: 'subresource', expression: "has(request.subResource) && request.subResource != ''" }],
    variables: [
      { name: 'changed', expression: changed },
      principals('reconciler', settings.guard.reconciler),
      principals('systemPrincipal', settings.guard.systemPrincipals),
    ],
    validations: [{
      // The deployment controller records a Deployment's revision annotation through its status.
      expression: `size(${v('changed')}) == 0 || ${v('reconciler')} || ${v('systemPrincipal')}`,
      message: "the metadata of an ApplySet member changes only through the object itself, where Furnish's protect-objects judges it",
      messageExpression: byRequester(' may not change the ', cel(`${v('changed')}.join(', ')`), ' of ', ...target, ' through its ', cel('request.subResource'),
        ` subresource: it is a member of an ApplySet (label ${KEY.applySetPartOf}), whose metadata changes only through the object itself, where Furnish judges who may change it`),
    }],
  };
}
