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
  /** annotation on every applied object: its template's deletionPolicy at apply time (prune or orphan it later). */
  deletionPolicy: 'furnish.dev/deletion-policy',
  /** annotation on the ApplySet parent: templates applied in full, sorted, comma-separated (status counts). */
  appliedTemplates: 'furnish.dev/templates',
  /** annotation on the ApplySet parent: templates that failed permanently, comma-separated (status counts, no retry loop). */
  failedTemplates: 'furnish.dev/failed-templates',
  /**
   * annotation on a namespace whose phase is `failed`: why, one line per failed template
   * (`template T: group/Kind/ns/name: Reason (HTTP n): message`). The guard quotes it.
   */
  failure: 'furnish.dev/failure',
  /**
   * label on the webhook registrations `npm start` writes: the id of that run, so that its watchdog
   * removes exactly those when the run is killed (scripts/start/watchdog.ts, docs/adr/0010).
   */
  localRun: 'furnish.dev/local-run',
} as const;

/**
 * Keys earlier versions wrote, each a copy of a fact with its own home (docs/adr/0009): removed
 * where found (the namespace's at its next reconcile, the template's at its next recount, the
 * object's by the next apply or release), never read.
 */
export const LEGACY_KEY = {
  /** annotation on a Namespace: a copy of what the ApplySet parent and the objects say. */
  applied: 'furnish.dev/applied',
  /** annotation on applied objects: a hash of the server's answer (drift is now judged by field ownership). */
  observedHash: 'furnish.dev/observed-hash',
  /** annotations on a NamespaceTemplate: what its last fan-out propagated (every change now fans out). */
  fanoutHash: 'furnish.dev/fanout-hash',
  fanoutEntries: 'furnish.dev/fanout-entries',
} as const;

/** `failed`: a matching template could not be applied (see KEY.failure); retried when anything changes. */
export const PHASE = { pending: 'pending', ready: 'ready', failed: 'failed' } as const;

/** Field manager of every server-side apply Furnish makes. */
export const FIELD_MANAGER = 'furnish';

/** The field manager of `furnish install`'s writes (npm start leaves registrations it wrote alone). */
export const INSTALL_FIELD_MANAGER = 'furnish-install';

/** Namespaces that are always opted out, whatever the configuration adds. */
export const SYSTEM_NAMESPACES: readonly string[] = ['kube-system', 'kube-public', 'kube-node-lease'];
