// Keys the reconcilers record on what they write. They belong with shared/keys.ts (the lead
// moves them there); kept here meanwhile so that nothing else is edited.
export const RECONCILE_KEY = {
  /** annotation on every applied object: content hash of what Furnish last applied. */
  hash: 'furnish.dev/hash',
  /** annotation on every applied object: deletionPolicy of its template at apply time. */
  deletionPolicy: 'furnish.dev/deletion-policy',
  /** annotation on the ApplySet parent: templates applied in full, comma-separated, sorted. */
  templates: 'furnish.dev/templates',
  /** annotation on the ApplySet parent: templates that failed permanently, comma-separated. */
  failedTemplates: 'furnish.dev/failed-templates',
  /** annotation on the ApplySet parent: keys (`group/Kind/namespace/name`) of every object applied, comma-separated. */
  inventory: 'furnish.dev/inventory',
  /** annotation on a NamespaceTemplate: fingerprint of what the last fan-out propagated. */
  fanoutHash: 'furnish.dev/fanout-hash',
} as const;
