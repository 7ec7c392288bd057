#!/usr/bin/env node
// The `furnish` CLI. Its TypeScript sources run as they are (type stripping), which needs the Node
// that package.json's `engines` names. Checked before the first TypeScript import: an older Node
// would otherwise die on it with ERR_UNKNOWN_FILE_EXTENSION and a stack trace.
import { readFileSync } from 'node:fs';

const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const floor = engines.node.replace(/^>=\s*/, '');
const older = (a, b) => {
  const [x, y] = [a, b].map((v) => v.split('.').map(Number));
  for (let i = 0; i < 3; i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0);
  return false;
};
if (older(process.versions.node, floor)) {
  process.stderr.write(`furnish needs Node.js ${floor} or later; this is ${process.version} (${process.execPath}).\n`
    + 'In a clone of the repository, `npx --no furnish` runs it on the Node the project pins (npm install first).\n');
  process.exit(1);
}
await import('../shared/cli/main.ts');
