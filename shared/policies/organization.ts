// 7. The organization rules that need nothing but the request and the namespace: reserved names and
// the metadata allowlist (reservedName and metadataAllowlist in
// shared/webhooks/rules/organization-namespace.ts), on a namespace that names an organization (its
// label, before or after the write). validate-namespace holds them for every namespace once an
// Organization exists (state, which a policy would have to read once per Organization: ADR 0011);
// a namespace that names one is under them whether or not any exists, in the webhook and here
// (namesOrganization), so this policy is a floor: it refuses what the webhook refuses there, and
// nothing else but a write whose allowlist check exceeds the API server's CEL cost limit (thousands
// of keys changed at once: ADR 0011). A namespace that names none is judged by validate-namespace
// alone, fail-closed.
import type { PolicySettings } from '../config/types.ts';
import { KEY } from '../keys.ts';
import { organizationSettings } from '../org/settings.ts';
import { ANNOTATIONS_WRITTEN_BY_FURNISH, OWN_RULE_KEYS } from '../webhooks/rules/organization-namespace.ts';
import { METADATA_SUBRESOURCES } from '../webhooks/request.ts';
import { anyOf, cel, firstWildcard, list, str, wildcard } from './cel.ts';
import { NS } from './namespace.ts';
import { byRequester, namespaceRule, type PolicySpec } from './policy.ts';
import { ANNOTATIONS, exemptName, LABELS, NAME, OLD_ANNOTATIONS, OLD_LABELS, principals, v, type Variable } from './variables.ts';

/** The labels `map` (a CEL map expression) name an organization: a non-empty label, as organizationOf reads it (the CEL twin of namesOrganization in organization-namespace.ts; the agreement test keeps them one rule). */
export const namesOrganization = (map: string) => `${str(KEY.organization)} in ${map} && ${map}[${str(KEY.organization)}] != ''`;

/**
 * The keys of one field this write adds, changes or removes (changedKeys) that the allowlist
 * refuses: not judged by their own rules, not Furnish's own annotations written by Furnish, and
 * matching no allowed pattern.
 */
function refusedKeys(field: 'labels' | 'annotations', [old, now]: readonly [Variable, Variable], allowed: readonly string[]): string {
  const furnishes = field === 'annotations' ? [`!(${v('furnish')} && (${anyOf(ANNOTATIONS_WRITTEN_BY_FURNISH.map((p) => wildcard('k', p)))}))`] : [];
  const judged = [`!(k in ${list([...OWN_RULE_KEYS[field]])})`, ...furnishes, `!(${anyOf(allowed.map((p) => wildcard('k', p)))})`].join(' && ');
  const [o, n] = [v(old.name), v(now.name)];
  return `${n}.filter(k, (!(k in ${o}) || ${o}[k] != ${n}[k]) && ${judged}) + ${o}.filter(k, !(k in ${n}) && ${judged})`;
}

/** Undefined while organizations are off (no rule to hold). */
export function organizationMetadata(settings: PolicySettings): PolicySpec | undefined {
  const org = organizationSettings(settings);
  if (!org.enabled) return undefined;
  const allowed = `labels ${JSON.stringify(org.allowedLabels)}, annotations ${JSON.stringify(org.allowedAnnotations)}`;
  return {
    name: 'furnish-organization-metadata',
    resourceRules: [namespaceRule(['CREATE', 'UPDATE'], METADATA_SUBRESOURCES)],
    variables: [
      NAME, LABELS, OLD_LABELS, ANNOTATIONS, OLD_ANNOTATIONS,
      exemptName(settings),
      principals('privileged', org.privileged),
      principals('furnish', settings.guard.reconciler),
      // organizationExemption: privileged requesters and exempt names are under no organization rule.
      { name: 'applies', expression: `(${namesOrganization(v(LABELS.name))} || ${namesOrganization(v(OLD_LABELS.name))}) && !${v('exempt')} && !${v('privileged')}` },
      { name: 'reserved', expression: `request.operation == 'CREATE' ? ${firstWildcard(v(NAME.name), org.reservedNames)} : ''` },
      {
        name: 'refused',
        expression: `(${refusedKeys('labels', [OLD_LABELS, LABELS], org.allowedLabels)}).map(k, 'label ' + k) + (${refusedKeys('annotations', [OLD_ANNOTATIONS, ANNOTATIONS], org.allowedAnnotations)}).map(k, 'annotation ' + k)`,
      },
    ],
    validations: [
      {
        // reserved-name
        expression: `!${v('applies')} || ${v('reserved')} == ''`,
        message: `names matching ${JSON.stringify(org.reservedNames)} are reserved`,
        messageExpression: byRequester(' may not create ', ...NS, ': names matching "', cel(v('reserved')), '" are reserved; choose another name'),
      },
      {
        // metadata-allowlist
        expression: `!${v('applies')} || size(${v('refused')}) == 0`,
        message: `only privileged principals change labels and annotations outside the allowlist (${allowed})`,
        messageExpression: byRequester(' may not add, change or remove ', cel(`${v('refused')}.join(', ')`), ' on ', ...NS, `: only privileged principals may; others may change ${allowed}`),
      },
    ],
  };
}
