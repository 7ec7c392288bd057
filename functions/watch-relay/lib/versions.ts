// The relay's memory: name → uid and resourceVersion, nothing else, so it stays flat as the
// cluster grows. Decides which watch events and relist differences become messages.
import type { MessageType } from '../../../shared/bus/envelope.ts';

export interface Seen {
  name: string;
  uid: string;
  resourceVersion: string;
  generation?: number;
}

export interface Change extends Seen {
  type: MessageType;
  /** Namespaces: the organization(s) the change concerns (shared/org/relay-organizations.ts). */
  organizations?: string[];
}

/**
 * An object's entry, one flat string: a template literal would leave a cons string holding the
 * uid and the resourceVersion as three more objects (about 100 bytes more per object).
 */
const entryOf = (uid: string, resourceVersion: string): string => [uid, resourceVersion].join(' ');

export class VersionIndex {
  private readonly byName = new Map<string, string>();

  get size(): number {
    return this.byName.size;
  }

  names(): IterableIterator<string> {
    return this.byName.keys();
  }

  get(name: string): { uid: string; resourceVersion: string } | undefined {
    const v = this.byName.get(name);
    if (v === undefined) return undefined;
    const space = v.indexOf(' ');
    return { uid: v.slice(0, space), resourceVersion: v.slice(space + 1) };
  }

  /** A watch event: null when it changes nothing we know (a replay after reconnect). */
  observe(type: 'ADDED' | 'MODIFIED' | 'DELETED', s: Seen): Change | null {
    const known = this.get(s.name);
    if (type === 'DELETED') {
      if (!known) return null;
      this.byName.delete(s.name);
      return { ...s, type };
    }
    if (known && known.uid === s.uid && known.resourceVersion === s.resourceVersion) return null;
    this.byName.set(s.name, entryOf(s.uid, s.resourceVersion));
    return { ...s, type: known && known.uid === s.uid ? 'MODIFIED' : 'ADDED' };
  }

  /**
   * Starts a relist: call `listed` for every listed object, then `finish` to learn the
   * deletions that happened while we were not watching.
   */
  relist(): { listed: (s: Seen) => Change | null; finish: () => Change[] } {
    const present = new Set<string>();
    return {
      listed: (s) => {
        present.add(s.name);
        return this.observe('MODIFIED', s);
      },
      finish: () => {
        const gone: Change[] = [];
        for (const name of [...this.byName.keys()]) {
          if (present.has(name)) continue;
          const known = this.get(name)!;
          this.byName.delete(name);
          gone.push({ name, uid: known.uid, resourceVersion: known.resourceVersion, type: 'DELETED' });
        }
        return gone;
      },
    };
  }
}
