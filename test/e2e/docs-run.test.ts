// `npm run test:docs` on its fixture guide (test/fixtures/docs-guide/): one stack started as
// `npm start` starts it, every runnable block run in walk order against it (a namespace created
// and `kubectl wait`ed Ready, templates listed, an expect-fail denial compared, the CLI through
// `npx --no`, a failure inside a pipeline), the stale block reported with its page, line, command and diff, the walk going on
// after it, and the stack stopped cleanly with nothing left behind. Always its own kube-sim:
// FURNISH_TEST_KUBECONFIG does not apply here.
import { expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describeWithTool } from '../support/tools.ts';

const root = join(import.meta.dirname, '..', '..');
const describeKubectl = describeWithTool('kubectl', 'the guide\'s runnable blocks drive the cluster with kubectl');

function walk(args: string[], env: NodeJS.ProcessEnv): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'scripts', 'docs-run.ts'), ...args], { cwd: root, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (status) => resolve({ status, output }));
  });
}

describeKubectl('npm run test:docs on the fixture guide', () => {
  it('runs every block in walk order on one npm start, reports the stale one with page, line and diff, and stops the stack', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'furnish-docs-e2e-'));
    try {
      const { status, output } = await walk(['test/fixtures/docs-guide'], {
        ...process.env, TMPDIR: tmp, FURNISH_START_PORT: '0', FURNISH_RELAY_PORT: '0', FURNISH_WEBHOOK_PORT: '0',
      });
      const lines = output.split('\n');
      // Page order is the README's, block order the page's; expect-fail is judged on its exit and output.
      expect(lines.filter((l) => /^(ok {3}|FAIL test)/.test(l)).map((l) => l.replace(/ \(\d+\.\d s\)$/, '').replace(/: .*/, ''))).toEqual([
        'ok   test/fixtures/docs-guide/namespaces.md:5',
        'ok   test/fixtures/docs-guide/namespaces.md:15',
        'ok   test/fixtures/docs-guide/namespaces.md:30',
        'ok   test/fixtures/docs-guide/namespaces.md:40 (expect-fail)',
        'ok   test/fixtures/docs-guide/namespaces.md:50 (expect-fail)',
        'FAIL test/fixtures/docs-guide/stale.md:5',
        'ok   test/fixtures/docs-guide/stale.md:15',
      ]);
      expect(output).toContain([
        'FAIL test/fixtures/docs-guide/stale.md:5: its output differs from the output block at line 9 (after normalising)',
        '  command:',
        `    kubectl get namespace docs-fixture -o jsonpath='{.metadata.labels.team}{"\\n"}'`,
        '  diff (- the docs, + this run):',
        '    - payments',
        '    + ',
      ].join('\n'));
      // Failures other than blocks': none, but for files someone else changed in a shared tree meanwhile.
      expect(lines.filter((l) => l.startsWith('FAIL ') && !l.startsWith('FAIL test/') && !l.startsWith('FAIL the walk left the clone changed'))).toEqual([]);
      expect(output).toMatch(/docs: 7 runnable blocks on 3 pages: 1 failed(; 1 other failure \(above\))? \(stack start [\d.]+ s, blocks [\d.]+ s, stop [\d.]+ s\)\n$/);
      expect(status).toBe(1);
      // The stack's state and the blocks' HOME lived in the walk's temporary folder, and went with
      // it; npm start's log stays beside it, named, since a block failed.
      const log = /^npm start's log during the walk \(its JSON lines\): (\S+)$/m.exec(output)?.[1];
      expect(log).toMatch(new RegExp(`^${tmp}/furnish-docs-\\w+-stack\\.log$`));
      expect(readFileSync(log!, 'utf8')).toContain('Furnish is running');
      expect(readdirSync(tmp).filter((f) => f.startsWith('furnish-docs-'))).toEqual([basename(log!)]);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 240_000);

  it('refuses a guide folder without a README before starting anything', async () => {
    const { status, output } = await walk(['test/fixtures'], process.env);
    expect(output).toBe("test/fixtures/README.md:1: no such file: the guide's README.md lists its pages in walk order\n(the conventions: docs/testing-the-docs.md)\n");
    expect(status).toBe(2);
  });
});
