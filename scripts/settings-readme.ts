// `npm run settings:readme`: rewrites README.md's settings list from the settings table
// (shared/config/settings.ts); test/unit/config/settings.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { readmeWithSettings } from '../shared/config/settings.ts';

const file = join(import.meta.dirname, '..', 'README.md');
const before = readFileSync(file, 'utf8');
const after = readmeWithSettings(before);
writeFileSync(file, after);
console.log(before === after ? 'README.md settings: already up to date' : 'README.md settings: regenerated');
