// Where a process's RSS is, from /proc/self/smaps (Linux): V8's heap is known from V8 itself; the
// rest of the anonymous memory is glibc malloc's (the main arena is `[heap]`; each further arena
// is an anonymous region glibc reserves 64 MiB-aligned, 64 MiB long, partly PROT_NONE) or thread
// stacks and V8's own regions; file-backed pages are the binary, libraries and mapped files.
import { readFileSync } from 'node:fs';

/** glibc's HEAP_MAX_SIZE on 64-bit: a non-main arena's reservation, aligned to its own size. */
const ARENA = 64 * 1024 * 1024;

export interface RssParts {
  /** Resident anonymous memory (private, not file-backed), bytes. */
  anon: number;
  /** Resident file-backed memory (the node binary, libraries, mapped files), bytes. */
  file: number;
  /** Of `anon`: malloc's main arena (`[heap]`, grown by brk). */
  mallocMain: number;
  /** Of `anon`: malloc's other arenas (one per thread that allocated, up to 8 × cores). */
  mallocArenas: number;
  /** How many non-main arenas are mapped. */
  arenaCount: number;
}

interface Mapping {
  start: number;
  end: number;
  perms: string;
  path: string;
  rss: number;
}

const HEADER = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ (\d+)\s*(.*)$/;

/** The mappings of an smaps text, each with its resident bytes. */
export function parseSmaps(text: string): Mapping[] {
  const maps: Mapping[] = [];
  for (const line of text.split('\n')) {
    const h = HEADER.exec(line);
    if (h) {
      maps.push({ start: parseInt(h[1]!, 16), end: parseInt(h[2]!, 16), perms: h[3]!, path: h[5]!.trim(), rss: 0 });
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && maps.length > 0) maps.at(-1)!.rss = Number(rss[1]) * 1024;
  }
  return maps;
}

/**
 * A non-main malloc arena: anonymous, starting on a 64 MiB boundary, and with the PROT_NONE rest
 * of its reservation right after it, the whole exactly 64 MiB (glibc's new_heap).
 */
function arenaStarts(maps: Mapping[]): Set<number> {
  const starts = new Set<number>();
  maps.forEach((m, i) => {
    if (m.path !== '' || m.start % ARENA !== 0 || !m.perms.startsWith('rw')) return;
    const next = maps[i + 1];
    const end = next && next.start === m.end && next.path === '' && next.perms.startsWith('---') ? next.end : m.end;
    if (end - m.start === ARENA) starts.add(m.start);
  });
  return starts;
}

export function rssParts(text: string): RssParts {
  const maps = parseSmaps(text);
  const arenas = arenaStarts(maps);
  const parts: RssParts = { anon: 0, file: 0, mallocMain: 0, mallocArenas: 0, arenaCount: arenas.size };
  for (const m of maps) {
    const anonymous = m.path === '' || m.path.startsWith('[');
    if (anonymous) parts.anon += m.rss;
    else parts.file += m.rss;
    if (m.path === '[heap]') parts.mallocMain += m.rss;
    if (arenas.has(m.start)) parts.mallocArenas += m.rss;
  }
  return parts;
}

/** This process's RSS parts; undefined where there is no /proc (not Linux). */
export function readRssParts(): RssParts | undefined {
  try {
    return rssParts(readFileSync('/proc/self/smaps', 'utf8'));
  } catch {
    return undefined;
  }
}
