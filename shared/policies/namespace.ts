// The namespace policies that hold what mutate-namespace records (so that webhook may fail open):
// the marks a new namespace carries, the creator afterwards, and the phase and Ready condition.
// Each validation mirrors a rule of shared/webhooks/rules/validate-namespace.ts, named beside it.
import { CREATOR_IDENTITY, REQUESTER_ANNOTATIONS } from '../auth/creator.ts';
import type { PolicySettings } from '../config/types.ts';
import { FURNISH_INITIALIZER, INIT_PHASE, INITIALIZER_KEY } from '../initializers/keys.ts';
import { KEY, PHASE } from '../keys.ts';
import { describeAccess } from '../kube/sar.ts';
import { METADATA_SUBRESOURCES } from '../webhooks/request.ts';
import { anyOf, cel, keyChanged, quoted, str } from './cel.ts';
import { byRequester, namespaceRule, type PolicySpec } from './policy.ts';
import { ANNOTATIONS, commaList, exemptName, LABELS, mayOnEveryTemplate, NAME, OLD_ANNOTATIONS, OLD_LABELS, principals, TEMPLATES, v, type Variable } from './variables.ts';

/** `namespace "x"` in a message. */
export const NS = ['namespace "', cel(v(NAME.name)), '"'] as const;
const has = (map: Variable, key: string) => `${str(key)} in ${v(map.name)}`;
const at = (map: Variable, key: string) => `${v(map.name)}[${str(key)}]`;

/** The cluster-wide `optout` check (optOutNeedsPermission): it also lets a namespace be created without Furnish's marks. */
export const OPT_OUT_CHECK = { verb: 'optout', ...TEMPLATES } as const;
export const optOutAllowed = mayOnEveryTemplate(OPT_OUT_CHECK.verb);

const NOT_MARKED = "Furnish's mutate-namespace webhook records it and did not run (are the functions unreachable?)";

const ONLY_FURNISH_SETS_PHASE = `only Furnish sets the phase (its reconciler, or mutate-namespace as this update's initializer annotations dictate: ${PHASE.ready} when the last initializer removes itself, ${PHASE.failed} when the working one reports failure, ${PHASE.pending} when a holder of verb "initialize" removes annotation ${KEY.failure} of a failed namespace)`;

/** The creator mutate-namespace records (creatorOf): the user a trusted creator named, else the requester; '' without a user name. */
function expectedCreator(): Variable {
  const named = REQUESTER_ANNOTATIONS.reduceRight(
    (otherwise, key) => `${v('trustedCreator')} && ${has(ANNOTATIONS, key)} && ${at(ANNOTATIONS, key)} != '' ? ${at(ANNOTATIONS, key)} : ${otherwise}`,
    v('username'),
  );
  return { name: 'creator', expression: `${v('username')} == '' ? '' : ${named}` };
}

/**
 * 1. A namespace is created with what mutate-namespace records: the creator, the phase `pending`
 * unless opted out, and the initializer list with `furnish` first. Unmarked (mutate-namespace did
 * not run) only for who may opt namespaces out, an auto-opt-out principal's namespace that carries
 * the opt-out annotation (it must: mutate-namespace records it), or an exempt name.
 */
export function namespaceMarks(settings: PolicySettings): PolicySpec {
  const phase = has(LABELS, KEY.phase);
  const initializers = v('initializers');
  return {
    name: 'furnish-namespace-marks',
    resourceRules: [namespaceRule(['CREATE'])],
    variables: [
      NAME, LABELS, ANNOTATIONS,
      { name: 'username', expression: "has(request.userInfo.username) ? request.userInfo.username : ''" },
      principals('trustedCreator', settings.trustedCreators),
      expectedCreator(),
      exemptName(settings),
      principals('autoOptOut', settings.autoOptOutPrincipals),
      principals('reconciler', settings.guard.reconciler),
      { name: 'optOutAnnotated', expression: `${has(ANNOTATIONS, KEY.optOut)} && ${at(ANNOTATIONS, KEY.optOut)} == 'true'` },
      { name: 'optedOut', expression: anyOf([v('exempt'), v('optOutAnnotated')]) },
      { name: 'unmarkedAllowed', expression: anyOf([v('exempt'), `${v('autoOptOut')} && ${v('optOutAnnotated')}`, optOutAllowed]) },
      { name: 'initializers', expression: commaList(v(ANNOTATIONS.name), INITIALIZER_KEY.initializers) },
    ],
    validations: [
      {
        // An auto-opt-out principal's namespace is opted out, as mutate-namespace records it; were it
        // created unmarked while that webhook did not answer, Furnish would populate it later.
        expression: `!${v('autoOptOut')} || ${v('optedOut')}`,
        message: `a namespace an auto-opt-out principal creates carries annotation ${KEY.optOut}="true", which Furnish's mutate-namespace webhook records`,
        messageExpression: byRequester(' may not create ', ...NS, ` without annotation ${KEY.optOut}="true": it matches an auto-opt-out principal, whose namespaces Furnish never populates; ${NOT_MARKED}; retry, or set the annotation`),
      },
      {
        // creator-is-immutable at CREATE
        expression: `!(${has(ANNOTATIONS, KEY.creator)}) || (${v('creator')} != '' && ${at(ANNOTATIONS, KEY.creator)} == ${v('creator')})`,
        message: `only a trusted creator may set annotation ${KEY.creator} to another user`,
        messageExpression: byRequester(` may not set annotation ${KEY.creator}=`, quoted(v(ANNOTATIONS.name), KEY.creator), ' on ', ...NS, ': it records who created the namespace (only a trusted creator may name another user)'),
      },
      {
        expression: `${v('creator')} == '' || ${has(ANNOTATIONS, KEY.creator)} || ${v('unmarkedAllowed')}`,
        message: `a namespace must carry annotation ${KEY.creator}, which Furnish's mutate-namespace webhook records`,
        messageExpression: byRequester(' may not create ', ...NS, ` without annotation ${KEY.creator}: ${NOT_MARKED}; retry, or ask someone with ${describeAccess(OPT_OUT_CHECK)} to create it`),
      },
      {
        // phase-set-only-by-furnish at CREATE
        expression: `!(${phase}) || (!${v('optedOut')} && ${at(LABELS, KEY.phase)} == ${str(PHASE.pending)}) || ${v('reconciler')}`,
        message: ONLY_FURNISH_SETS_PHASE,
        messageExpression: byRequester(` may not set label ${KEY.phase}=`, quoted(v(LABELS.name), KEY.phase), ' on ', ...NS, `: ${ONLY_FURNISH_SETS_PHASE}`),
      },
      {
        expression: `${phase} || ${v('optedOut')} || ${v('unmarkedAllowed')}`,
        message: `a namespace that is not opted out must carry label ${KEY.phase}=${PHASE.pending}, which Furnish's mutate-namespace webhook records`,
        messageExpression: byRequester(' may not create ', ...NS, ` without label ${KEY.phase}=${PHASE.pending}: ${NOT_MARKED}; retry, opt the namespace out (annotation ${KEY.optOut}="true", needs ${describeAccess(OPT_OUT_CHECK)}), or ask someone with that permission to create it`),
      },
      {
        // Opted out: mutate-namespace records no list (recordInitializers).
        expression: `${v('optedOut')} || !(${phase} && ${at(LABELS, KEY.phase)} == ${str(PHASE.pending)}) || (size(${initializers}) > 0 && ${initializers}[0] == ${str(FURNISH_INITIALIZER)})`,
        message: `a pending namespace lists its initializers in annotation ${INITIALIZER_KEY.initializers}, "${FURNISH_INITIALIZER}" first, as mutate-namespace records them`,
        messageExpression: byRequester(' may not create ', ...NS, ` with annotation ${INITIALIZER_KEY.initializers}=`, quoted(v(ANNOTATIONS.name), INITIALIZER_KEY.initializers), `: only Furnish's mutate-namespace webhook records the initializers, "${FURNISH_INITIALIZER}" first`),
      },
    ],
  };
}

/**
 * 2. The creator and the identity admission saw never change (creator-is-immutable at UPDATE).
 * The identity of an earlier version (JSON, `{`…) may be re-spelled: validate-namespace judges that.
 */
export function creatorImmutable(): PolicySpec {
  const changed = (key: string) => keyChanged(v(OLD_ANNOTATIONS.name), v(ANNOTATIONS.name), key);
  const message = (key: string, why: string) =>
    byRequester(` may not change annotation ${key} of `, ...NS, ' from ', quoted(v(OLD_ANNOTATIONS.name), key), ' to ', quoted(v(ANNOTATIONS.name), key), `: ${why}`);
  return {
    name: 'furnish-creator-immutable',
    resourceRules: [namespaceRule(['UPDATE'], METADATA_SUBRESOURCES)],
    variables: [NAME, ANNOTATIONS, OLD_ANNOTATIONS],
    validations: [
      { expression: `!(${changed(KEY.creator)})`, message: `annotation ${KEY.creator} is immutable`, messageExpression: message(KEY.creator, 'it is immutable') },
      {
        expression: `!(${changed(CREATOR_IDENTITY)}) || (${has(OLD_ANNOTATIONS, CREATOR_IDENTITY)} && ${at(OLD_ANNOTATIONS, CREATOR_IDENTITY)}.startsWith('{'))`,
        message: `annotation ${CREATOR_IDENTITY} is immutable`,
        messageExpression: message(CREATOR_IDENTITY, 'it records the identity admission saw, and is immutable'),
      },
    ],
  };
}

/** The initializer-failed report of this update, as newFailureReport and parseFailureReport read it. */
export const FAILURE_REPORT_VARIABLES: Variable[] = [
  {
    name: 'newReport',
    expression: `${has(ANNOTATIONS, INITIALIZER_KEY.initializerFailed)} && (!(${has(OLD_ANNOTATIONS, INITIALIZER_KEY.initializerFailed)}) || ${at(OLD_ANNOTATIONS, INITIALIZER_KEY.initializerFailed)} != ${at(ANNOTATIONS, INITIALIZER_KEY.initializerFailed)})`,
  },
  { name: 'reportParts', expression: `${has(ANNOTATIONS, INITIALIZER_KEY.initializerFailed)} ? ${at(ANNOTATIONS, INITIALIZER_KEY.initializerFailed)}.split(':') : []` },
  // `<initializer>: <reason>`, both non-empty once trimmed; a reason spanning further colons is never empty.
  { name: 'reportWellFormed', expression: "size(variables.reportParts) >= 2 && variables.reportParts[0].trim() != '' && (size(variables.reportParts) > 2 || variables.reportParts[1].trim() != '')" },
  { name: 'reportedInitializer', expression: "size(variables.reportParts) > 0 ? variables.reportParts[0].trim() : ''" },
];

export const INITIALIZER_LIST_VARIABLES: Variable[] = [
  { name: 'initializers', expression: commaList(v(ANNOTATIONS.name), INITIALIZER_KEY.initializers) },
  { name: 'oldInitializers', expression: commaList(v(OLD_ANNOTATIONS.name), INITIALIZER_KEY.initializers) },
];

/** phaseFromUpdate: the phase this update's initializer annotations lead to; '' for none. */
const DERIVED_PHASE: Variable = {
  name: 'derivedPhase',
  expression: [
    `${v('oldPhase')} == ${str(INIT_PHASE.pending)} && size(${v('oldInitializers')}) == 1 && size(${v('initializers')}) == 0 ? ${str(INIT_PHASE.ready)}`,
    `${v('oldPhase')} == ${str(INIT_PHASE.pending)} && ${v('newReport')} && ${v('reportWellFormed')} ? ${str(INIT_PHASE.failed)}`,
    `${v('oldPhase')} == ${str(INIT_PHASE.failed)} && ${has(OLD_ANNOTATIONS, INITIALIZER_KEY.failure)} && !(${has(ANNOTATIONS, INITIALIZER_KEY.failure)}) ? ${str(INIT_PHASE.pending)}`,
    "''",
  ].join(' : '),
};

/**
 * Every Ready condition's status, reason and message, in order, as readyConditionOf compares them
 * (a second Ready condition added through namespaces/status is a change too; absent = empty, as
 * the server omits an empty string). Its type in any case: `kubectl wait --for=condition=Ready`
 * takes `ready` or `READY` too (EqualFold; no letter of "ready" has a non-ASCII fold).
 */
function readyConditions(object: string): string {
  const field = (f: string) => `has(c.${f}) ? c.${f} : ''`;
  return `${object} != null && has(${object}.status) && has(${object}.status.conditions) ? ${object}.status.conditions.filter(c, has(c.type) && c.type.lowerAscii() == 'ready').map(c, [${['status', 'reason', 'message'].map(field).join(', ')}]) : []`;
}

/**
 * 3. The phase label and the Ready condition change only by Furnish's reconciler, or the phase as
 * this update's initializer annotations dictate (phase-set-only-by-furnish, ready-condition-set-only-by-furnish).
 */
export function phaseAndReady(settings: PolicySettings): PolicySpec {
  const phaseChanged = keyChanged(v(OLD_LABELS.name), v(LABELS.name), KEY.phase);
  return {
    name: 'furnish-phase-and-ready',
    resourceRules: [namespaceRule(['UPDATE'], METADATA_SUBRESOURCES)],
    variables: [
      NAME, LABELS, OLD_LABELS, ANNOTATIONS, OLD_ANNOTATIONS,
      principals('reconciler', settings.guard.reconciler),
      { name: 'oldPhase', expression: `${has(OLD_LABELS, KEY.phase)} ? ${at(OLD_LABELS, KEY.phase)} : ''` },
      ...INITIALIZER_LIST_VARIABLES,
      ...FAILURE_REPORT_VARIABLES,
      DERIVED_PHASE,
      { name: 'readyUnchanged', expression: `(${readyConditions('object')}) == (${readyConditions('oldObject')})` },
    ],
    validations: [
      {
        expression: `!(${phaseChanged}) || ${v('reconciler')} || (${has(LABELS, KEY.phase)} && ${v('derivedPhase')} != '' && ${at(LABELS, KEY.phase)} == ${v('derivedPhase')})`,
        message: ONLY_FURNISH_SETS_PHASE,
        messageExpression: byRequester(` may not change label ${KEY.phase} from `, quoted(v(OLD_LABELS.name), KEY.phase), ' to ', quoted(v(LABELS.name), KEY.phase), ' on ', ...NS, `: ${ONLY_FURNISH_SETS_PHASE}`),
      },
      {
        expression: `${v('readyUnchanged')} || ${v('reconciler')}`,
        message: 'only Furnish sets the Ready condition of a namespace, with the phase',
        messageExpression: byRequester(' may not change the Ready condition of ', ...NS, ': only Furnish sets it, with the phase'),
      },
    ],
  };
}

/** 5a. Setting the opt-out needs `optout`, unless an auto-opt-out principal creates the namespace (opt-out-needs-permission). */
export function optOut(settings: PolicySettings): PolicySpec {
  const on = (map: Variable) => `${has(map, KEY.optOut)} && ${at(map, KEY.optOut)} == 'true'`;
  return {
    name: 'furnish-opt-out',
    resourceRules: [namespaceRule(['CREATE', 'UPDATE'], METADATA_SUBRESOURCES)],
    variables: [NAME, ANNOTATIONS, OLD_ANNOTATIONS, principals('autoOptOut', settings.autoOptOutPrincipals)],
    validations: [{
      expression: anyOf([`!(${on(ANNOTATIONS)})`, on(OLD_ANNOTATIONS), `request.operation == 'CREATE' && ${v('autoOptOut')}`, optOutAllowed]),
      message: `opting a namespace out needs ${describeAccess(OPT_OUT_CHECK)}`,
      messageExpression: byRequester(' may not opt ', ...NS, ` out of NamespaceTemplates (annotation ${KEY.optOut}="true"): needs ${describeAccess(OPT_OUT_CHECK)}`),
    }],
  };
}
