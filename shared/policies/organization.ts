// 6. The organization rules that need no state (shared/webhooks/rules/organization-namespace.ts):
// reserved names, and the metadata allowlist. Rendered only when organizations are enabled; the
// privileged principals and exempt names skip them, as organizationExemption decides.
import type { PolicySettings } from '../config/types.ts';
import { organizationSettings } from '../org/settings.ts';
import { METADATA_SUBRESOURCES } from '../webhooks/request.ts';
import { KEYS_WRITTEN_BY_FURNISH, OWN_RULE_KEYS } from '../webhooks/rules/organization-namespace.ts';
import { anyOf, anyWildcard, cel, list, str, wildcard } from './cel.ts';
import { NS } from './namespace.ts';
import { byRequester, namespaceRule, type PolicySpec } from './policy.ts';
import { ANNOTATIONS, exemptName, LABELS, NAME, OLD_ANNOTATIONS, OLD_LABELS, principals, v, type Variable } from './variables.ts';

const exempted = (settings: PolicySettings): Variable[] => [principals('privileged', organizationSettings(settings).privileged), exemptName(settings)];
const EXEMPTED = `${v('privileged')} || ${v('exempt')}`;

export function reservedNames(settings: PolicySettings): PolicySpec {
  const { reservedNames: patterns } = organizationSettings(settings);
  // The first pattern the name matches, for the message (matchesAny).
  const matching = patterns.reduceRight((otherwise, p) => `${wildcard(v(NAME.name), p)} ? ${str(p)} : ${otherwise}`, "''");
  return {
    name: 'furnish-reserved-names',
    resourceRules: [namespaceRule(['CREATE'])],
    variables: [NAME, ...exempted(settings), { name: 'reserved', expression: matching }],
    validations: [{
      expression: `${EXEMPTED} || ${v('reserved')} == ''`,
      message: `names matching ${JSON.stringify(patterns)} are reserved`,
      messageExpression: byRequester(' may not create ', ...NS, ': names matching "', cel(v('reserved')), '" are reserved; choose another name'),
    }],
  };
}

/** Keys of a map that differ between old and new (changedKeys): added, changed or removed. */
function changedKeys(name: string, before: Variable, after: Variable): Variable {
  const [b, a] = [v(before.name), v(after.name)];
  return { name, expression: `${a}.filter(k, !(k in ${b}) || ${b}[k] != ${a}[k]) + ${b}.filter(k, !(k in ${a}))` };
}

export function metadataAllowlist(settings: PolicySettings): PolicySpec {
  const { allowedLabels, allowedAnnotations } = organizationSettings(settings);
  // Judged by their own rules; Furnish's identity also writes its own keys (metadataAllowlist).
  const exempt = anyOf([`k in ${list([...OWN_RULE_KEYS])}`, `${v('furnish')} && (${anyWildcard('k', KEYS_WRITTEN_BY_FURNISH)})`]);
  const refused = (changed: string, allowed: readonly string[]) => `${v(changed)}.filter(k, !(${exempt}) && !(${anyWildcard('k', allowed)}))`;
  const others = `labels ${JSON.stringify(allowedLabels)}, annotations ${JSON.stringify(allowedAnnotations)}`;
  return {
    name: 'furnish-metadata-allowlist',
    resourceRules: [namespaceRule(['CREATE', 'UPDATE'], METADATA_SUBRESOURCES)],
    variables: [
      NAME, LABELS, OLD_LABELS, ANNOTATIONS, OLD_ANNOTATIONS, ...exempted(settings),
      principals('furnish', settings.guard.reconciler),
      changedKeys('changedLabels', OLD_LABELS, LABELS),
      changedKeys('changedAnnotations', OLD_ANNOTATIONS, ANNOTATIONS),
      { name: 'refused', expression: `${refused('changedLabels', allowedLabels)}.map(k, 'label ' + k) + ${refused('changedAnnotations', allowedAnnotations)}.map(k, 'annotation ' + k)` },
    ],
    validations: [{
      expression: `${EXEMPTED} || size(${v('refused')}) == 0`,
      message: `only privileged principals may change other label and annotation keys than ${others}`,
      messageExpression: byRequester(' may not add, change or remove ', cel(`${v('refused')}.join(', ')`), ' on ', ...NS, `: only privileged principals may; others may change ${others}`),
    }],
  };
}
