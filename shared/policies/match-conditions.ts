// Webhook matchConditions, where the API server has in-tree policies: each keeps out of a webhook
// requests that webhook would allow without a look-up, so they never leave the cluster. A
// matchCondition sees object, oldObject, request and authorizer (no variables); every condition
// must hold for the webhook to be called.
import { CREATOR_IDENTITY, REQUESTER_ANNOTATIONS } from '../auth/creator.ts';
import type { PolicySettings, WebhookName } from '../config/types.ts';
import { INITIALIZER_KEY } from '../initializers/keys.ts';
import { KEY } from '../keys.ts';
import { organizationSettings } from '../org/settings.ts';
import { anyOf, anyPrincipal, keyChanged, metadataMap, str } from './cel.ts';
import { namesOrganization } from './organization.ts';
import { mayOnEveryTemplate } from './variables.ts';

export interface MatchCondition {
  name: string;
  expression: string;
}

const CREATE = "request.operation == 'CREATE'";
const LABELS = `(${metadataMap('object', 'labels')})`;
const OLD_LABELS = `(${metadataMap('oldObject', 'labels')})`;
const ANNOTATIONS = `(${metadataMap('object', 'annotations')})`;
const OLD_ANNOTATIONS = `(${metadataMap('oldObject', 'annotations')})`;

const annotationChanged = (key: string) => keyChanged(OLD_ANNOTATIONS, ANNOTATIONS, key);
const INITIALIZER_KEYS = Object.values(INITIALIZER_KEY);

/**
 * mutate-namespace (failurePolicy Ignore: the policies hold what it records): every CREATE, and
 * the UPDATEs it changes (restoreCreator, ensureNameLabel, the initializer mutations' phase).
 */
function mutateNamespace(): MatchCondition[] {
  const legacyIdentity = `${str(CREATOR_IDENTITY)} in ${OLD_ANNOTATIONS} && ${OLD_ANNOTATIONS}[${str(CREATOR_IDENTITY)}].startsWith('{')`;
  const nameLabelWrong = `!(${str(KEY.metadataName)} in ${LABELS} && ${LABELS}[${str(KEY.metadataName)}] == object.metadata.name)`;
  return [{
    name: 'changes-what-mutate-namespace-records',
    expression: anyOf([CREATE, ...[KEY.creator, CREATOR_IDENTITY, ...INITIALIZER_KEYS].map(annotationChanged), legacyIdentity, nameLabelWrong]),
  }];
}

/** `use` of every NamespaceTemplate (no resourceName): templates-need-use allows whatever the templates are. */
const USE_EVERY_TEMPLATE = mayOnEveryTemplate('use');

/**
 * validate-namespace (stays Fail): only requests whose rules need state. A CREATE is kept out when
 * the requester may use every template, names nobody through a requester annotation, is
 * organization-privileged (or organizations are off), and carries neither an identity annotation
 * (its spelling is validate-namespace's to judge: CEL cannot urlencode) nor an initializer list
 * (which initializers select it is state): mutate-namespace records both, so without it, as when
 * the functions are unreachable, there is none. An UPDATE is kept out when it changes no
 * label, opt-out, creator, requester or initializer key, nor (organizations on, an unprivileged
 * requester, on a namespace that names no organization: the allowlist) any annotation. Everything
 * else it judges, the policies hold too.
 */
function validateNamespace(settings: PolicySettings): MatchCondition[] {
  const organizations = organizationSettings(settings);
  const privileged = organizations.enabled ? anyPrincipal(organizations.privileged) : 'true';
  const carriesNeither = [...REQUESTER_ANNOTATIONS, CREATOR_IDENTITY, INITIALIZER_KEY.initializers].map((k) => `!(${str(k)} in ${ANNOTATIONS})`).join(' && ');
  const judgedKeys = [KEY.optOut, KEY.creator, CREATOR_IDENTITY, ...REQUESTER_ANNOTATIONS, ...INITIALIZER_KEYS].map(annotationChanged);
  // With organizations, the allowlist judges every annotation an unprivileged requester changes;
  // furnish-organization-metadata holds it where the namespace names an organization (a label, so
  // unchanged here: a label change is sent anyway), and the webhook alone where it names none.
  const allowlisted = organizations.enabled ? [`!(${privileged}) && ${ANNOTATIONS} != ${OLD_ANNOTATIONS} && !(${namesOrganization(OLD_LABELS)})`] : [];
  return [{
    name: 'needs-state',
    expression: `${CREATE} ? !(${carriesNeither} && (${privileged}) && ${USE_EVERY_TEMPLATE}) : ${anyOf([`${LABELS} != ${OLD_LABELS}`, ...judgedKeys, ...allowlisted])}`,
  }];
}

/** guard-initializing (stays Fail): the reconciler and the system controllers are allowed without a look-up. */
function guardInitializing(settings: PolicySettings): MatchCondition[] {
  return [
    { name: 'not-furnish-reconciler', expression: `!(${anyPrincipal(settings.guard.reconciler)})` },
    { name: 'not-system-principal', expression: `!(${anyPrincipal(settings.guard.systemPrincipals)})` },
  ];
}

/**
 * protect-objects (stays Fail): the reconciler is always allowed (protectFirstStep), and the system
 * controllers' deletions (namespace deletion, garbage collection: never a scale).
 */
function protectObjects(settings: PolicySettings): MatchCondition[] {
  return [
    { name: 'not-furnish-reconciler', expression: `!(${anyPrincipal(settings.guard.reconciler)})` },
    { name: 'not-system-principal-deleting', expression: `request.operation != 'DELETE' || !(${anyPrincipal(settings.guard.systemPrincipals)})` },
  ];
}

/** mutate-pod: only run-once Pods without a deadline (isRunOnceWithoutDeadline), and none while organizations are off. */
function mutatePod(settings: PolicySettings): MatchCondition[] {
  if (!organizationSettings(settings).enabled) return [{ name: 'organizations-enabled', expression: 'false' }];
  return [{
    name: 'run-once-without-deadline',
    expression: "has(object.spec) && has(object.spec.restartPolicy) && object.spec.restartPolicy in ['Never', 'OnFailure'] && !has(object.spec.activeDeadlineSeconds)",
  }];
}

/** The matchConditions of each webhook that gets some (the others are called as before). */
export function webhookMatchConditions(settings: PolicySettings): Partial<Record<WebhookName, MatchCondition[]>> {
  return {
    'mutate-namespace': mutateNamespace(),
    'validate-namespace': validateNamespace(settings),
    'guard-initializing': guardInitializing(settings),
    'protect-objects': protectObjects(settings),
    'mutate-pod': mutatePod(settings),
  };
}
