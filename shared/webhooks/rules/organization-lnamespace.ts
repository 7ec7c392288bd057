// How the organization rules judge an LNamespace: as the namespace it asks the reconciler for,
// with the LNamespace's requester. Its CREATE as that namespace's CREATE; an UPDATE that changes
// its organization or its billing fields as that namespace's UPDATE: a change of organization is a
// transfer (membership of both, a slot in the new one), and billing fields are the namespace's
// annotations `furnish.dev/billing.<field>`, so the keys refused on a namespace stay refused
// through an LNamespace. Pure: the handler (mutate-lnamespace) reads and reserves.
import { KEY } from '../../keys.ts';
import type { KubeObject } from '../../kube/types.ts';
import { billingAnnotations } from '../../lnamespace/desired.ts';
import type { NamespaceInfo } from '../../render/types.ts';

/** What of an LNamespace the organization rules see. */
export interface LNamespaceAsk {
  organization?: string;
  billing: Record<string, unknown>;
}

export function lnamespaceAsk(object: KubeObject | undefined): LNamespaceAsk {
  const billing = (object as { spec?: { billing?: unknown } } | undefined)?.spec?.billing;
  return {
    organization: object?.metadata?.labels?.[KEY.organization] || undefined,
    billing: billing && typeof billing === 'object' && !Array.isArray(billing) ? billing as Record<string, unknown> : {},
  };
}

/** Whether an LNamespace UPDATE changes what the organization rules judge. */
export function lnamespaceAskChanged(before: LNamespaceAsk, after: LNamespaceAsk): boolean {
  return before.organization !== after.organization || JSON.stringify(billingAnnotations(before.billing)) !== JSON.stringify(billingAnnotations(after.billing));
}

/**
 * The organization an LNamespace UPDATE moves its namespace from and to. From: the namespace's own
 * (`live`, read fresh) when it exists, else the LNamespace's old label. To: the new label; without
 * one, the namespace keeps its organization if the LNamespace never named one (its creator's
 * default applied), and loses it (refused: organization-required) if the label was removed.
 */
export function lnamespaceTransfer(before: LNamespaceAsk, after: LNamespaceAsk, live: string | undefined): { from?: string; to?: string } {
  const from = live ?? before.organization;
  const to = after.organization ?? (before.organization === undefined ? from : undefined);
  return { from, to };
}

/** The namespace an LNamespace asks for, as the organization rules judge it. */
export function namespaceAsked(name: string, organization: string | undefined, billing: Record<string, unknown>, creator?: string): NamespaceInfo {
  return {
    name,
    labels: organization ? { [KEY.organization]: organization } : {},
    annotations: { ...(creator !== undefined ? { [KEY.creator]: creator } : {}), ...billingAnnotations(billing) },
  };
}
