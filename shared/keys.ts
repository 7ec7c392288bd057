// Every label and annotation key Furnish owns, in one place. See README "Keys".
export const KEY = {
  creator: 'furnish.dev/creator',
  phase: 'furnish.dev/phase',
  optOut: 'furnish.dev/opt-out',
  organization: 'furnish.dev/organization',
  template: 'furnish.dev/template',
  requirePermission: 'furnish.dev/require-permission',
  apply: 'furnish.dev/apply',
  metadataName: 'kubernetes.io/metadata.name',
  applySetPartOf: 'applyset.kubernetes.io/part-of',
  applySetId: 'applyset.kubernetes.io/id',
  applySetTooling: 'applyset.kubernetes.io/tooling',
  applySetGroupKinds: 'applyset.kubernetes.io/contains-group-kinds',
} as const;

export const PHASE = { pending: 'pending', ready: 'ready' } as const;

/** Field manager of every server-side apply Furnish makes. */
export const FIELD_MANAGER = 'furnish';

/** Namespaces that are always opted out, whatever the configuration adds. */
export const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];
