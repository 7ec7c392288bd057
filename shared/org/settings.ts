// Organization policy of a cluster: pure data, part of the webhooks' PolicySettings. Absent, the
// organization rules are off (a cluster without Organizations behaves as before).
import type { PrincipalPattern } from '../config/types.ts';

export interface OrganizationSettings {
  /** Namespaces must belong to an organization; the rules below apply. */
  enabled: boolean;
  /** Bypass every organization rule (users, `group:x`, `system:serviceaccount:ns:name`, `*` suffix wildcards). */
  privileged: PrincipalPattern[];
  /** Namespaces an organization may own unless its spec.namespaceQuota says otherwise. */
  defaultNamespaceQuota: number;
  /** Label keys unprivileged principals may add, change or remove (`team`, `app.kubernetes.io/*`). */
  allowedLabels: string[];
  /** Annotation keys unprivileged principals may add, change or remove. */
  allowedAnnotations: string[];
  /** Names unprivileged principals may not create (`kube-*`). */
  reservedNames: string[];
  /** How long an admitted create holds its quota slot before the reconciler counts the namespace. */
  reservationSeconds: number;
  /** activeDeadlineSeconds given to run-once Pods in organization namespaces that set none. */
  podActiveDeadlineSeconds: number;
}

export const DEFAULT_ORGANIZATION_SETTINGS: Readonly<OrganizationSettings> = {
  enabled: false,
  privileged: ['group:system:masters'],
  defaultNamespaceQuota: 25,
  allowedLabels: ['team', 'app.kubernetes.io/*'],
  allowedAnnotations: ['description', 'kubectl.kubernetes.io/last-applied-configuration'],
  reservedNames: ['kube-*', 'openshift-*', 'furnish-*'],
  reservationSeconds: 60,
  podActiveDeadlineSeconds: 3600,
};

/** The cluster's organization settings, defaults filled in. */
export function organizationSettings(settings: { organizations?: Partial<OrganizationSettings> }): OrganizationSettings {
  return { ...DEFAULT_ORGANIZATION_SETTINGS, ...settings.organizations };
}

/** `*` anywhere matches any run of characters; everything else is literal. */
export function matchesWildcard(value: string, pattern: string): boolean {
  if (!pattern.includes('*')) return value === pattern;
  const parts = pattern.split('*');
  if (!value.startsWith(parts[0]!) || !value.endsWith(parts.at(-1)!)) return false;
  let at = parts[0]!.length;
  const end = value.length - parts.at(-1)!.length;
  for (const part of parts.slice(1, -1)) {
    const found = value.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return at <= end;
}

export function matchesAny(value: string, patterns: readonly string[]): string | undefined {
  return patterns.find((p) => matchesWildcard(value, p));
}
