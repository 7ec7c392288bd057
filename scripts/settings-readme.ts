// `npm run settings:docs`: rewrites the table of docs/reference/settings.md from the settings table
// (shared/config/settings.ts); test/unit/config/settings.test.ts fails while the two differ.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { withSettingsTable } from '../shared/config/settings.ts';

const file = join(import.meta.dirname, '..', 'docs', 'reference', 'settings.md');
const before = readFileSync(file, 'utf8');
const after = withSettingsTable(before);
writeFileSync(file, after);
console.log(before === after ? 'docs/reference/settings.md: already up to date' : 'docs/reference/settings.md: regenerated');
