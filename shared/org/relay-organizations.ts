// What the relay remembers of each namespace's organization (label furnish.dev/organization), so
// that its messages name the organization(s) a change concerns: the label now and, when it
// differed, before (a transfer), or the one a namespace had when it is found gone. Only
// namespaces with the label are held, and each organization's name once (interned), so the
// memory is a map entry per organized namespace.
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';

/** The organizations a change concerns: now and before, without repeats, [] for none. */
export function concernedOrganizations(now: string | undefined, before: string | undefined): string[] {
  if (!now) return before ? [before] : [];
  return before && before !== now ? [now, before] : [now];
}

export class NamespaceOrganizations {
  private readonly byName = new Map<string, string>();
  private readonly interned = new Map<string, string>();

  /** A namespace seen (listed, added, modified, deleted): what its message should name. */
  observe(ns: KubeObject, event: 'LISTED' | 'ADDED' | 'MODIFIED' | 'DELETED'): string[] {
    const name = ns.metadata.name ?? '';
    const now = ns.metadata.labels?.[KEY.organization] || undefined;
    const before = this.byName.get(name);
    if (event === 'DELETED' || !now) this.byName.delete(name);
    else if (now !== before) this.byName.set(name, this.intern(now));
    return concernedOrganizations(now, before);
  }

  /** A namespace found gone by a relist: the organization it had. */
  forget(name: string): string[] {
    const before = this.byName.get(name);
    this.byName.delete(name);
    return concernedOrganizations(undefined, before);
  }

  get size(): number {
    return this.byName.size;
  }

  private intern(org: string): string {
    const known = this.interned.get(org);
    if (known !== undefined) return known;
    this.interned.set(org, org);
    return org;
  }
}
