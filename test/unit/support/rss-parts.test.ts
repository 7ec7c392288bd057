// The memory bench's split of RSS by owner (test/bench/rss-parts.ts): malloc's main arena and its
// 64 MiB-aligned thread arenas told apart from other anonymous memory and from files.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { readRssParts, rssParts } from '../../bench/rss-parts.ts';

const KB = 1024;

/** One smaps entry: its header line and the Rss line (the only field read). */
const entry = (start: number, end: number, perms: string, path: string, rssKb: number) =>
  `${start.toString(16)}-${end.toString(16)} ${perms} 00000000 00:00 0${path ? `                 ${path}` : ''}\nSize: ${(end - start) / KB} kB\nRss:                 ${rssKb} kB\nPss: ${rssKb} kB\n`;

const MIB = 1024 * 1024;
const ARENA_AT = 0x7f0000000000; // a multiple of 64 MiB

describe('rssParts', () => {
  it('counts [heap] and each 64 MiB-aligned rw + PROT_NONE reservation as malloc, the rest by anonymous or file', () => {
    const smaps = [
      entry(0x400000, 0x600000, 'r-xp', '/usr/bin/node', 2048),
      entry(0x1000000, 0x3000000, 'rw-p', '[heap]', 20 * KB),
      // a thread arena: 10 MiB usable, the rest of its 64 MiB reserved
      entry(ARENA_AT, ARENA_AT + 10 * MIB, 'rw-p', '', 8 * KB),
      entry(ARENA_AT + 10 * MIB, ARENA_AT + 64 * MIB, '---p', '', 0),
      // anonymous, aligned, but not a 64 MiB reservation (a V8 page, a stack)
      entry(ARENA_AT + 128 * MIB, ARENA_AT + 129 * MIB, 'rw-p', '', 1024),
      entry(ARENA_AT + 200 * MIB, ARENA_AT + 201 * MIB, 'rw-p', '[stack]', 512),
    ].join('');
    expect(rssParts(smaps)).toEqual({ anon: (20 * KB + 8 * KB + 1024 + 512) * KB, file: 2048 * KB, mallocMain: 20 * MIB, mallocArenas: 8 * MIB, arenaCount: 1 });
  });

  it("adds up to this process's RSS on Linux", () => {
    const parts = readRssParts();
    if (!parts) {
      expect(process.platform).not.toBe('linux');
      return;
    }
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]);
    // Two reads a moment apart of a live process: within 5%.
    expect(Math.abs((parts.anon + parts.file) / KB - rssKb)).toBeLessThan(rssKb * 0.05);
    expect(parts.mallocMain + parts.mallocArenas).toBeGreaterThan(0);
  });
});
