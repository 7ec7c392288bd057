// 6. Furnish's hold on an object, written through a subresource. kube-apiserver's status
// strategies for built-in kinds keep the metadata a `/status` write sends (a ResourceQuota's
// labels, annotations and owner references; a Deployment's annotations and owner references), so
// whoever may write `resourcequotas/status` could take Furnish's quota out of its ApplySet, change
// the marks its pruning reads, or give it an owner for the garbage collector to delete it by.
// protect-objects judges the objects themselves, not their subresources: it would otherwise see
// every write of the quota controller and of quota admission, and, failing closed while
// unreachable, stop Pod creation in every governed namespace. So this rule lives only here, where
// the server runs it itself. It judges what protect-objects judges of every object Furnish applied
// (its ownership marks), and owner references; not other labels, annotations or finalizers, which
// controllers write through status (a cloud provider's load-balancer finalizer and annotations on
// a Service), and which only a protecting template keeps (state: the template).
import type { PolicySettings } from '../config/types.ts';
import { KEY } from '../keys.ts';
import { OWNERSHIP_MARKS } from '../ownership.ts';
import { cel, keyChanged, str } from './cel.ts';
import { byRequester, type PolicySpec } from './policy.ts';
import { ANNOTATIONS, LABELS, OLD_ANNOTATIONS, OLD_LABELS, principals, v, type Variable } from './variables.ts';

const OWNERS = (object: string) => `has(${object}.metadata.ownerReferences) ? ${object}.metadata.ownerReferences : []`;

/** What a subresource write may not change: each an entry of the `changed` list when it does. */
function changes(): string {
  const marks = (field: 'labels' | 'annotations', [old, now]: readonly [Variable, Variable], singular: string) => OWNERSHIP_MARKS[field].map((key) =>
    `((${keyChanged(v(old.name), v(now.name), key)}) ? [${str(`${singular} ${key}`)}] : [])`);
  return [
    ...marks('labels', [OLD_LABELS, LABELS], 'label'), ...marks('annotations', [OLD_ANNOTATIONS, ANNOTATIONS], 'annotation'),
    `((${OWNERS('object')}) != (${OWNERS('oldObject')}) ? ['ownerReferences'] : [])`,
  ].join(' + ');
}

export function subresourceMetadata(settings: PolicySettings): PolicySpec {
  const target = [cel('request.kind.kind'), ' "', cel('request.name'), '" in namespace "', cel('request.namespace'), '"'];
  return {
    name: 'furnish-subresource-metadata',
    // Every subresource of every namespaced kind: those that carry the object itself (status) are
    // judged by what they change; a Scale carries no labels, so the objectSelector leaves it out.
    resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], resources: ['*/*'], operations: ['UPDATE'], scope: 'Namespaced' }],
    // Namespaces Furnish governs (only Furnish sets the phase), and in them ApplySet members (old
    // or new object, as protect-objects' objectSelector): every object Furnish applied.
    namespaceSelector: { matchExpressions: [{ key: KEY.phase, operator: 'Exists' }] },
    objectSelector: { matchExpressions: [{ key: KEY.applySetPartOf, operator: 'Exists' }] },
    matchConditions: [{ name: 'subresource', expression: "has(request.subResource) && request.subResource != ''" }],
    variables: [
      LABELS, OLD_LABELS, ANNOTATIONS, OLD_ANNOTATIONS,
      { name: 'changed', expression: changes() },
      principals('reconciler', settings.guard.reconciler),
      principals('systemPrincipal', settings.guard.systemPrincipals),
    ],
    validations: [{
      expression: `size(${v('changed')}) == 0 || ${v('reconciler')} || ${v('systemPrincipal')}`,
      message: "Furnish's marks and an ApplySet member's owner references change only through the object itself, where Furnish's protect-objects judges them",
      messageExpression: byRequester(' may not change the ', cel(`${v('changed')}.join(', ')`), ' of ', ...target, ' through its ', cel('request.subResource'),
        ` subresource: it is a member of an ApplySet (label ${KEY.applySetPartOf}), whose marks and owner references change only through the object itself, where Furnish judges who may change them`),
    }],
  };
}
