// The Node flags that bound the young generation (shared/functions/memory-flags.ts): they do what
// the comment says, and every place that starts the relay or a reconciler passes them.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { NODE_MEMORY_FLAGS, OLD_SPACE_MB, SEMI_SPACE_MB } from '../../../shared/functions/memory-flags.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

/** New space of a node process with `flags` after a second of allocation with survivors, and its heap limit, MB. */
function heapMb(flags: readonly string[]): { young: number; limit: number } {
  const probe = `const ring = new Array(20000); let i = 0; const t = Date.now();
    while (Date.now() - t < 1000) for (let k = 0; k < 1000; k++) ring[i++ % ring.length] = { a: 'x'.repeat(50) + i, b: [i] };
    const v8 = require('v8');
    console.log(JSON.stringify({ young: v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576, limit: v8.getHeapStatistics().heap_size_limit / 1048576 }))`;
  return JSON.parse(execFileSync(process.execPath, [...flags, '-e', probe], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })) as { young: number; limit: number };
}

describe('memory flags', () => {
  it('cap the young generation at two semi-spaces of SEMI_SPACE_MB and the heap near OLD_SPACE_MB, whatever the host', () => {
    const heap = heapMb(NODE_MEMORY_FLAGS);
    expect(heap.young).toBeLessThanOrEqual(2 * SEMI_SPACE_MB);
    // The limit is the old generation's plus the young generation's (three semi-spaces).
    expect(heap.limit).toBeLessThanOrEqual(OLD_SPACE_MB + 3 * SEMI_SPACE_MB);
  });

  it("are the relay container's first arguments, in the Deployment and in the image", () => {
    const deployment = parse(read('infra/relay/deployment.yaml')) as { spec: { template: { spec: { containers: { name: string; args: string[] }[] } } } };
    const relay = deployment.spec.template.spec.containers.find((c) => c.name === 'relay')!;
    expect(relay.args).toEqual([...NODE_MEMORY_FLAGS, 'index.js']);
    const cmd = /^CMD (\[.*\])$/m.exec(read('infra/relay/image/Dockerfile'))?.[1];
    expect(JSON.parse(cmd ?? 'null')).toEqual([...NODE_MEMORY_FLAGS, 'index.js']);
  });

  it("are in the reconcilers' NODE_OPTIONS (terraform)", () => {
    const options = /NODE_OPTIONS\s*=\s*"([^"]*)"/.exec(read('terraform/main.tf'))?.[1] ?? '';
    expect(options.split(' ')).toEqual(expect.arrayContaining([...NODE_MEMORY_FLAGS]));
  });

  it("are `npm start`'s node flags: the local stack's memory is the functions'", () => {
    const start = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts.start!;
    expect(start.split(' ')).toEqual(['node', ...NODE_MEMORY_FLAGS, 'scripts/start.ts']);
  });
});
