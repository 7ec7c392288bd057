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
  // What the reconcilers record on what they write, so that they can tell what they applied.
  /** annotation on every applied object: content hash of what Furnish last applied (skip unchanged objects). */
  appliedHash: 'furnish.dev/hash',
  /** annotation older versions put on applied objects (the hash is now in the namespace's record, KEY.applied): never compared, removed by the next apply. */
  observedHash: 'furnish.dev/observed-hash',
  /** annotation on every applied object: its template's deletionPolicy at apply time (prune or orphan it later). */
  deletionPolicy: 'furnish.dev/deletion-policy',
  /** annotation on the ApplySet parent: templates applied in full, sorted, comma-separated (status counts). */
  appliedTemplates: 'furnish.dev/templates',
  /** annotation on the ApplySet parent: templates that failed permanently, comma-separated (status counts, no retry loop). */
  failedTemplates: 'furnish.dev/failed-templates',
  /**
   * annotation on a Namespace: what Furnish applied there (per object its template and hashes),
   * the reconciler's record of its own writes (reconcile/record.ts). Never the word on ownership.
   */
  applied: 'furnish.dev/applied',
  /**
   * annotation on a namespace whose phase is `failed`: why, one line per failed template
   * (`template T: group/Kind/ns/name: Reason (HTTP n): message`). The guard quotes it.
   */
  failure: 'furnish.dev/failure',
  /** annotation on a NamespaceTemplate: fingerprint of what its last fan-out propagated (fan out only on change). */
  fanoutHash: 'furnish.dev/fanout-hash',
  /**
   * annotation on a NamespaceTemplate: what its last fan-out propagated entry by entry (fingerprints.ts
   * fanoutEntries), so that the next reads only the kinds whose entries changed.
   */
  fanoutEntries: 'furnish.dev/fanout-entries',
} as const;

/** `failed`: a matching template could not be applied (see KEY.failure); retried when anything changes. */
export const PHASE = { pending: 'pending', ready: 'ready', failed: 'failed' } as const;

/** Field manager of every server-side apply Furnish makes. */
export const FIELD_MANAGER = 'furnish';

/** Namespaces that are always opted out, whatever the configuration adds. */
export const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];
