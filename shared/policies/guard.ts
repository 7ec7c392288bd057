// 4. Writes into a namespace that is not furnished yet (phase pending or failed), as
// guard-initializing judges them (shared/webhooks/rules/guard-initializing.ts, initializers-guard.ts):
// Furnish's reconciler, the system controllers and holders of `initialize` on that namespace; while
// the namespace lists pending initializers, the webhook decides (which initializer's principals may
// write is state), so that webhook stays failurePolicy Fail.
import type { PolicySettings } from '../config/types.ts';
import { INIT_PHASE, INITIALIZER_KEY } from '../initializers/keys.ts';
import { KEY } from '../keys.ts';
import { cel, list, metadataMap, str, text } from './cel.ts';
import { byRequester, type PolicySpec } from './policy.ts';
import { commaList, initializeAllowed, needsInitialize, principals, v } from './variables.ts';

const NOT_FURNISHED = [INIT_PHASE.pending, INIT_PHASE.failed];

/**
 * What the guard judges, here and in guard-initializing's registration: writes of every namespaced
 * resource, and the subresources that act on a workload or issue a credential (an eviction deletes
 * a Pod, an ephemeral container runs one, a token request mints a ServiceAccount's credential, a
 * scale starts Pods), these in pending namespaces only (subresourceLeftOpen: in a failed one,
 * what already runs keeps running, add-ons' evictions and scaling included). Not status, exec and
 * the like: the controllers' and the kubelet's.
 */
export const GUARDED_RESOURCES = ['*', 'pods/eviction', 'pods/ephemeralcontainers', 'serviceaccounts/token', '*/scale'] as const;

export function guard(settings: PolicySettings): PolicySpec {
  const ns = ['namespace "', cel(v('nsName')), '"'];
  const refusal = byRequester(' may not write into ', ...ns, ' until it is furnished: ', ...needsInitialize(v('nsName')));
  const failure = `${str(KEY.failure)} in ${v('nsAnnotations')} ? ${v('nsAnnotations')}[${str(KEY.failure)}].split('\\n').join('; ') : ''`;
  const failed = byRequester(' may not write into ', ...ns, ', which failed to initialize (', cel(failure), '): ', ...needsInitialize(v('nsName')),
    `; waiting will not help: fix the NamespaceTemplates the failure names (Furnish applies them again when one changes), or a holder of verb "initialize" repairs the namespace and removes its annotation ${KEY.failure}`);
  return {
    name: 'furnish-guard',
    resourceRules: [{ apiGroups: ['*'], apiVersions: ['*'], resources: [...GUARDED_RESOURCES], operations: ['CREATE', 'UPDATE', 'DELETE'], scope: 'Namespaced' }],
    // As guard-initializing's registration. Not a matchCondition: kube-apiserver gives those no
    // namespaceObject (null there); the validation reads the same labels again.
    namespaceSelector: { matchExpressions: [{ key: KEY.phase, operator: 'In', values: NOT_FURNISHED }] },
    variables: [
      { name: 'nsName', expression: 'namespaceObject.metadata.name' },
      { name: 'nsLabels', expression: metadataMap('namespaceObject', 'labels') },
      { name: 'phase', expression: `${str(KEY.phase)} in ${v('nsLabels')} ? ${v('nsLabels')}[${str(KEY.phase)}] : ''` },
      { name: 'nsAnnotations', expression: metadataMap('namespaceObject', 'annotations') },
      { name: 'pendingInitializers', expression: commaList(v('nsAnnotations'), INITIALIZER_KEY.initializers) },
      principals('reconciler', settings.guard.reconciler),
      principals('systemPrincipal', settings.guard.systemPrincipals),
    ],
    validations: [{
      expression: [
        `!(${v('phase')} in ${list(NOT_FURNISHED)})`, v('reconciler'), v('systemPrincipal'),
        // subresourceLeftOpen (guard-initializing.ts).
        `(has(request.subResource) && request.subResource != '' && ${v('phase')} == ${str(INIT_PHASE.failed)})`,
        `(${v('phase')} == ${str(INIT_PHASE.pending)} && size(${v('pendingInitializers')}) > 0)`,
        initializeAllowed(v('nsName')),
      ].join(' || '),
      message: 'only Furnish\'s reconciler, the system controllers and holders of verb "initialize" on the namespace write into a namespace that is not furnished yet',
      // As guard-initializing words it (stillFurnishing, writesWaitForInitializers), but for the per-template advice.
      messageExpression: `${v('phase')} == ${str(INIT_PHASE.failed)} ? ${failed} : ${text(...ns, ' is still being furnished; retry in a few seconds (')} + ${refusal} + ')'`,
    }],
  };
}
