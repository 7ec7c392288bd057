// `npm run bench [-- name...]`: runs every test/bench/*.bench.ts (or the named ones) one after
// another, each in its own process so that one benchmark's heap and JIT state never colour the
// next. Each bench prints its own numbers, always beside a baseline measured in the same run.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const dir = join(import.meta.dirname, '..', 'test', 'bench');
const wanted = process.argv.slice(2);
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .filter((f) => wanted.length === 0 || wanted.some((w) => f.startsWith(w)))
  .sort();

if (benches.length === 0) {
  console.error(`no benchmark matches ${wanted.join(', ')}; have: ${readdirSync(dir).join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const file of benches) {
  console.log(`\n=== ${file}`);
  const run = spawnSync(process.execPath, ['--expose-gc', join(dir, file)], { stdio: 'inherit' });
  if (run.status !== 0) failed += 1;
}
process.exit(failed === 0 ? 0 : 1);
