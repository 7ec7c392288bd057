// The docs walk's pure parts (scripts/docs-run.ts): its command line, `npm start`'s own node
// arguments, each block's environment, what it left in the clone, its last line.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { blockEnv, leftInClone, npmStartNodeArgs, parseWalkArgs, walkSummary } from '../../support/docs/walk.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

describe('parseWalkArgs', () => {
  it('walks docs/guide by default; a folder, --bail and --timeout change it', () => {
    expect(parseWalkArgs([])).toEqual({ guide: 'docs/guide', bail: false, blockTimeoutSeconds: 120 });
    expect(parseWalkArgs(['test/fixtures/docs-guide', '--bail', '--timeout', '30'])).toEqual({ guide: 'test/fixtures/docs-guide', bail: true, blockTimeoutSeconds: 30 });
  });

  it('says what is wrong with a bad command line', () => {
    expect(parseWalkArgs(['--timeout', 'soon'])).toEqual({ error: '--timeout needs a number of seconds, got "soon"' });
    expect(parseWalkArgs(['--timeout'])).toEqual({ error: '--timeout needs a number of seconds, got ""' });
    expect(parseWalkArgs(['--verbose'])).toEqual({ error: 'unknown option --verbose' });
    expect(parseWalkArgs(['a', 'b'])).toEqual({ error: 'one guide folder, got a b' });
  });
});

describe('npmStartNodeArgs', () => {
  it("is package.json's start script without its `node`", () => {
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const args = npmStartNodeArgs(scripts.start!);
    expect(args.at(-1)).toBe('scripts/start.ts');
    expect(`node ${args.join(' ')}`).toBe(scripts.start);
  });

  it('refuses a start script it cannot run the same way', () => {
    expect(() => npmStartNodeArgs('tsx scripts/start.ts')).toThrow(/no longer `node <flags> <script>`/);
    expect(() => npmStartNodeArgs('node a.ts && node b.ts')).toThrow(/no longer `node <flags> <script>`/);
  });
});

describe('blockEnv', () => {
  it("is the user's environment with the stack's kubeconfig, the walk's HOME, and node_modules/.bin first on PATH", () => {
    const env = blockEnv({ PATH: '/usr/bin', KUBECONFIG: '/home/u/.kube/config', LANG: 'C', GONE: undefined }, { root: '/repo', nodeDir: '/node/bin', kubeconfig: '/tmp/w/state/kube-sim/kubeconfig', home: '/tmp/w/home' });
    expect(env).toEqual({ PATH: '/repo/node_modules/.bin:/node/bin:/usr/bin', KUBECONFIG: '/tmp/w/state/kube-sim/kubeconfig', HOME: '/tmp/w/home', LANG: 'C' });
  });
});

describe('leftInClone', () => {
  it('is what git status shows after the walk and not before', () => {
    expect(leftInClone(' M README.md\n', ' M README.md\n?? team.yaml\n M examples/a.yaml\n')).toEqual(['?? team.yaml', ' M examples/a.yaml']);
    expect(leftInClone('', '')).toEqual([]);
  });
});

describe('walkSummary', () => {
  it('counts blocks and failures and says where the time went', () => {
    expect(walkSummary({ blocks: 6, pages: 3, failed: 0, notRun: 0, problems: 0 }, { start: 10.44, blocks: 7.2, stop: 0.5 })).toBe('docs: 6 runnable blocks on 3 pages: all passed (stack start 10.4 s, blocks 7.2 s, stop 0.5 s)');
    expect(walkSummary({ blocks: 6, pages: 3, failed: 1, notRun: 2, problems: 0 }, { start: 1, blocks: 2, stop: 3 })).toBe('docs: 6 runnable blocks on 3 pages: 1 failed, 2 not run (stack start 1.0 s, blocks 2.0 s, stop 3.0 s)');
    expect(walkSummary({ blocks: 6, pages: 3, failed: 0, notRun: 0, problems: 1 }, { start: 1, blocks: 2, stop: 3 })).toBe('docs: 6 runnable blocks on 3 pages: all passed; 1 other failure (above) (stack start 1.0 s, blocks 2.0 s, stop 3.0 s)');
  });
});
