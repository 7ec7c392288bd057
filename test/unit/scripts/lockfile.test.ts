// `npm install` on a fresh clone must leave it clean: the lockfile's own entry says what
// package.json says, or npm rewrites it (the engines floor once moved without it).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';

const root = join(import.meta.dirname, '..', '..', '..');
const read = (file: string) => JSON.parse(readFileSync(join(root, file), 'utf8')) as Record<string, unknown>;

describe('package-lock.json', () => {
  it('records package.json as it is: name, version, engines, dependencies', () => {
    const pkg = read('package.json');
    const own = (read('package-lock.json').packages as Record<string, Record<string, unknown>>)[''];
    const fields = ['name', 'version', 'engines', 'dependencies', 'devDependencies', 'license', 'bin'];
    expect(Object.fromEntries(fields.map((f) => [f, own?.[f]]))).toEqual(Object.fromEntries(fields.map((f) => [f, pkg[f]])));
  });
});
