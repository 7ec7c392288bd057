// "Which templates this identity may use": the one rule, called by admission (validate-namespace),
// the reconciler (reconcile-namespace) and the CLI (`furnish render`, and `furnish admit` through
// admission). A namespace may match a template annotated furnish.dev/require-permission only if
// its creator holds `use` on namespacetemplates/<name> (DESIGN.md). The rule names the templates
// to ask about and the access check for each; each caller answers the checks its own way
// (SubjectAccessReview, the offline RBAC evaluator, --granted) and matchTemplates then leaves out
// the refused ones. Pure.
import type { AccessCheck } from '../kube/sar.ts';
import type { UserInfo } from '../kube/types.ts';
import { newlyMatchedTemplates, requiresPermission, templateName, templatesNeedingPermission } from '../render/match.ts';
import type { NamespaceInfo, NamespaceTemplate } from '../render/types.ts';
import { templateUseCheck, templateUseRefused } from './creator.ts';

export interface TemplateUseInput {
  namespace: NamespaceInfo;
  /** The namespace before an UPDATE: only the templates the change newly selects are asked about. */
  old?: NamespaceInfo;
  templates: readonly NamespaceTemplate[];
  /** Namespaces no template applies to, beyond kube-system, kube-public, kube-node-lease. */
  systemNamespaces?: readonly string[];
  /**
   * Whose `use` counts: the creator. At CREATE the one admission records (the requester, or the
   * user a trusted creator named); afterwards the recorded one (creatorIdentityOf). Undefined
   * when the namespace records none: every template requiring permission is then refused.
   */
  identity: UserInfo | undefined;
}

/** One template requiring permission: the check to grant, or a refusal without asking. */
export type TemplateUse = { template: string; check: AccessCheck; refused: string } | { template: string; deny: string };

/**
 * Names of the permission-requiring templates the namespace would match (at UPDATE: newly, because
 * its labels or its opt-out changed), in name order.
 */
export function templatesToAuthorize(ns: NamespaceInfo, old: NamespaceInfo | undefined, templates: readonly NamespaceTemplate[], systemNamespaces: readonly string[] = []): string[] {
  const opts = { systemNamespaces };
  const selected = old ? newlyMatchedTemplates(old, ns, templates, { ...opts, granted: () => true }).filter(requiresPermission) : templatesNeedingPermission(ns, templates, opts);
  return selected.map(templateName);
}

/** The checks for templates already selected (`templatesToAuthorize`), for `identity`. */
export function useOf(names: readonly string[], identity: UserInfo | undefined, namespace: string): TemplateUse[] {
  return names.map((template) =>
    identity
      ? { template, check: templateUseCheck(identity, template), refused: templateUseRefused(template) }
      : { template, deny: `template "${template}" requires permission and namespace "${namespace}" records no creator` },
  );
}

/** The rule: every template requiring permission the namespace would match, with what decides it. */
export function templateUse(input: TemplateUseInput): TemplateUse[] {
  return useOf(templatesToAuthorize(input.namespace, input.old, input.templates, input.systemNamespaces), input.identity, input.namespace.name);
}
