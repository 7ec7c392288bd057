// 5b. The initializer keys (shared/webhooks/rules/initializers-validate.ts): the list only shrinks
// from the front, by holders of `initialize`; a failure report names the working initializer and
// is made by a holder of `initialize`; Furnish's failure record changes only by one. Which
// principal belongs to which initializer is state (NamespaceInitializationConfigurations): that
// part stays with validate-namespace.
import { INITIALIZER_KEY } from '../initializers/keys.ts';
import { METADATA_SUBRESOURCES } from '../webhooks/request.ts';
import { cel, keyChanged, quoted, str } from './cel.ts';
import { FAILURE_REPORT_VARIABLES, INITIALIZER_LIST_VARIABLES, NS } from './namespace.ts';
import { byRequester, namespaceRule, type PolicySpec } from './policy.ts';
import { ANNOTATIONS, initializeAllowed, NAME, needsInitialize, OLD_ANNOTATIONS, v } from './variables.ts';

const LIST = INITIALIZER_KEY.initializers;
const REPORT = INITIALIZER_KEY.initializerFailed;
const RECORD = INITIALIZER_KEY.failure;
const CREATE = "request.operation == 'CREATE'";

export function initializerKeys(): PolicySpec {
  const joined = (name: string) => `${v(name)}.join(',')`;
  const hadList = `${str(LIST)} in ${v(OLD_ANNOTATIONS.name)}`;
  const hasList = `${str(LIST)} in ${v(ANNOTATIONS.name)}`;
  const needs = needsInitialize(v(NAME.name));
  return {
    name: 'furnish-initializer-keys',
    resourceRules: [namespaceRule(['CREATE', 'UPDATE'], METADATA_SUBRESOURCES)],
    variables: [
      NAME, ANNOTATIONS, OLD_ANNOTATIONS,
      ...INITIALIZER_LIST_VARIABLES,
      ...FAILURE_REPORT_VARIABLES,
      // listChange: entries hold no comma and are never empty, so joined lists compare as lists.
      { name: 'listUnchanged', expression: `${hadList} ? ${joined('oldInitializers')} == ${joined('initializers')} : !(${hasList})` },
      {
        name: 'listCompleted',
        expression: `${hadList} && size(${v('oldInitializers')}) == size(${v('initializers')}) + 1 && ${joined('oldInitializers')} == (size(${v('initializers')}) == 0 ? ${v('oldInitializers')}[0] : ${v('oldInitializers')}[0] + ',' + ${joined('initializers')})`,
      },
      { name: 'initialize', expression: initializeAllowed(v(NAME.name)) },
    ],
    validations: [
      {
        // initializers-remove-themselves-in-order (mutate-namespace sets the list at CREATE)
        expression: `${CREATE} || ${v('listUnchanged')} || (${v('listCompleted')} && ${v('initialize')})`,
        message: `an initializer may only remove itself from annotation ${LIST}, when it is first, holding verb "initialize"`,
        messageExpression: `${v('listCompleted')} ? ${byRequester(' may not remove initializer "', cel(`${v('oldInitializers')}[0]`), '" from ', ...NS, ': ', ...needs)} : ${byRequester(` may not change annotation ${LIST} of `, ...NS, ' from ', quoted(v(OLD_ANNOTATIONS.name), LIST), ' to ', quoted(v(ANNOTATIONS.name), LIST), ': an initializer may only remove itself, when it is first')}`,
      },
      {
        // failure-reported-by-its-initializer
        expression: `${CREATE} ? !(${str(REPORT)} in ${v(ANNOTATIONS.name)}) : !${v('newReport')} || (${v('reportWellFormed')} && size(${v('oldInitializers')}) > 0 && ${v('reportedInitializer')} == ${v('oldInitializers')}[0] && ${v('initialize')})`,
        message: `annotation ${REPORT} is set only by the working initializer, holding verb "initialize"`,
        messageExpression: [
          `${CREATE} ? ${byRequester(` may not set annotation ${REPORT} on `, ...NS, ' at creation: only a working initializer reports failure')}`,
          `!${v('reportWellFormed')} ? ${byRequester(` may not set annotation ${REPORT}=`, quoted(v(ANNOTATIONS.name), REPORT), ' on ', ...NS, ': it must read "<initializer>: <reason>"')}`,
          `size(${v('oldInitializers')}) == 0 ? ${byRequester(' may not report initializer "', cel(v('reportedInitializer')), '" failed on ', ...NS, ': no initializer is working')}`,
          `${v('reportedInitializer')} != ${v('oldInitializers')}[0] ? ${byRequester(' may not report initializer "', cel(v('reportedInitializer')), '" failed on ', ...NS, ': the working initializer is "', cel(`${v('oldInitializers')}[0]`), '"')}`,
          byRequester(' may not report initializer "', cel(v('reportedInitializer')), '" failed on ', ...NS, ': ', ...needs),
        ].join(' : '),
      },
      {
        // failure-record-needs-initialize
        expression: `!(${keyChanged(v(OLD_ANNOTATIONS.name), v(ANNOTATIONS.name), RECORD)}) || ${v('initialize')}`,
        message: `changing annotation ${RECORD} needs verb "initialize" on the namespace`,
        messageExpression: byRequester(` may not change annotation ${RECORD} of `, ...NS, ' to ', quoted(v(ANNOTATIONS.name), RECORD), ': ', ...needs),
      },
    ],
  };
}
