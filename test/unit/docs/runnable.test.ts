// The guide's runnable blocks (npm run test:docs): which blocks a page has, the order of the pages,
// what is normalised before an output is compared, and what a failure says.
import { describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { readGuide } from '../../support/docs/guide.ts';
import { DocsError, fences } from '../../support/docs/markdown.ts';
import { asUserSees, failureReport, guideOrder, judgeBlock, lineDiff, lineMatches, linesMatch, normaliseOutput, runnableBlocks, unlistedPages, type RunnableBlock } from '../../support/docs/runnable.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const page = (...lines: string[]) => lines.join('\n');

describe('fences', () => {
  it('finds backtick and tilde fences with their lines, indented ones (in a list) unindented', () => {
    const md = page('text', '```sh runnable', 'echo a', '```', '1. step', '   ~~~~text', '   indented', '   ~~~~', '``inline``');
    expect(fences('p.md', md)).toEqual([
      { line: 2, info: 'sh runnable', body: 'echo a', endLine: 4 },
      { line: 6, info: 'text', body: 'indented', endLine: 8 },
    ]);
  });

  it('a longer fence holds a shorter one; an unclosed fence is an error naming its line', () => {
    expect(fences('p.md', page('````md', '```sh', 'x', '```', '````'))).toEqual([{ line: 1, info: 'md', body: '```sh\nx\n```', endLine: 5 }]);
    expect(() => fences('p.md', page('ok', '```sh runnable', 'echo'))).toThrow(new DocsError('p.md', 2, 'the code block opened here (```) is never closed'));
  });
});

describe('runnableBlocks', () => {
  it('takes ```sh runnable blocks, their expect-fail mark and the ```text output block right after each', () => {
    const md = page(
      '# Page', '```sh runnable', 'kubectl create namespace a', '```', '', '```text output', 'namespace/a created', '```',
      '```sh', 'not runnable', '```',
      '```sh runnable expect-fail', 'false', '```',
    );
    expect(runnableBlocks('docs/guide/p.md', md)).toEqual([
      { page: 'docs/guide/p.md', line: 2, command: 'kubectl create namespace a', expectFail: false, output: { line: 6, text: 'namespace/a created' } },
      { page: 'docs/guide/p.md', line: 12, command: 'false', expectFail: true },
    ]);
  });

  it('refuses what would silently not be checked: a misspelt mark, a runnable block of another shell, an output block with no block before it', () => {
    const refused = (md: string) => {
      try {
        runnableBlocks('p.md', md);
      } catch (e) {
        return (e as Error).message;
      }
      return 'accepted';
    };
    expect(refused(page('```sh runnable expect-fial', 'x', '```'))).toBe('p.md:1: unknown word "expect-fial" after ```sh runnable (known: expect-fail)');
    expect(refused(page('```bash runnable', 'x', '```'))).toBe('p.md:1: a runnable block is ```sh runnable, not ```bash runnable');
    expect(refused(page('```sh expect-fail', 'x', '```'))).toBe('p.md:1: ```sh expect-fail: expect-fail only go with ```sh runnable');
    expect(refused(page('```sh runnable', 'x', '```', 'prose', '```text output', 'y', '```'))).toBe('p.md:5: a ```text output block must follow a ```sh runnable block (blank lines between at most); the block before it is ```sh runnable at lines 1-3');
    expect(refused(page('```text output', 'y', '```'))).toBe('p.md:1: a ```text output block must follow a ```sh runnable block (blank lines between at most)');
    // A stray fence (``` twice) turns the next runnable block into the text of a plain one.
    expect(refused(page('```yaml', 'a: 1', '```', '```', '', '```sh runnable', 'x', '```', '', '```text output', 'y', '```'))).toBe('p.md:10: a ```text output block must follow a ```sh runnable block (blank lines between at most); the block before it is ``` at lines 4-8');
    expect(refused(page('```sh runnable', 'x', '```', '```text output', 'y', '```', '```text output', 'z', '```'))).toBe('p.md:7: a second ```text output block for the block at line 1');
    expect(refused(page('```sh runnable', 'x', '```', '```json output', 'y', '```'))).toBe('p.md:4: an output block is ```text output, not ```json output');
    expect(refused(page('```sh runnable', '', '```'))).toBe('p.md:1: an empty ```sh runnable block');
  });
});

describe('guideOrder', () => {
  it('is the README, then each page of the folder it links, in order of first mention', () => {
    const readme = page(
      '# Guide', '1. [Templates](templates.md)', '2. [Namespaces](./namespaces.md#phases) and [templates again](templates.md)',
      '3. [Deep](more/orgs.md) [Reference](../reference/cli.md) [site](https://example.com/x.md) [image](img.png)',
      '`[in code](code.md)`', '```', '[in a fence](fence.md)', '```',
    );
    expect(guideOrder(readme)).toEqual(['README.md', 'templates.md', 'namespaces.md', 'more/orgs.md']);
  });

  it('names the pages with runnable blocks the walk would never reach', () => {
    expect(unlistedPages(['README.md', 'a.md'], ['a.md', 'z.md', 'b.md'])).toEqual(['b.md', 'z.md']);
  });
});

describe('normaliseOutput', () => {
  it('replaces ages, timestamps, UIDs, resourceVersions, ports, hex runs and random suffixes; keeps the rest', () => {
    const run = page(
      '',
      'NAME           STATUS   AGE',
      'docs-fixture   Active   3m20s',
      'uid: 0f8fad5b-d9cb-469f-a165-70867728950e',
      '  resourceVersion: "12345"',
      '  creationTimestamp: "2026-11-27T11:32:39Z"',
      '"resourceVersion":"7",',
      'pod/web-7d4b9c6f8d-x7k2p   Running',
      'LAST SEEN   Normal   team-a.furnish-populated.mih3k2x01a2b',
      'Started: Fri, 27 Nov 2026 11:32:39 +0000\tTimeout 10s,',
      'metrics at http://127.0.0.1:43121/metrics/3f9a0c1d2e3f4a5b6c7d8e9f00112233 ',
      '\x1b[31mred\x1b[0m',
      '',
    );
    expect(normaliseOutput(run)).toBe(page(
      'NAME STATUS AGE',
      'docs-fixture Active <age>',
      'uid: <uid>',
      '  resourceVersion: <rv>',
      '  creationTimestamp: "<time>"',
      '"resourceVersion":<rv>,',
      'pod/web-7d4b9c6f8d-<random> Running',
      'LAST SEEN Normal team-a.furnish-populated.<random>',
      'Started: <time> Timeout 10s,',
      'metrics at http://127.0.0.1:<port>/metrics/<hex>',
      'red',
    ));
  });

  it('leaves names, words and versions alone', () => {
    const text = 'namespace/team-a created\nfurnish 0.1.0 on node v24.11.1\nalice-edit bob-ns security-defaults 2 items\nnamespace-class=privileged';
    expect(normaliseOutput(text)).toBe(text);
  });

  it('makes two runs of the same table equal whatever their ages and column widths', () => {
    const a = 'NAME     STATUS   AGE\nteam-a   Active   5s\n';
    const b = 'NAME     STATUS   AGE\nteam-a   Active   118m\n';
    expect(normaliseOutput(a)).toBe(normaliseOutput(b));
  });
});

describe('linesMatch', () => {
  it('matches line for line, a ... line standing for any number of lines', () => {
    expect(linesMatch(['a', 'b'], ['a', 'b'])).toBe(true);
    expect(linesMatch(['a', 'b'], ['a', 'c'])).toBe(false);
    expect(linesMatch(['a', 'b'], ['a', 'b', 'c'])).toBe(false);
    expect(linesMatch(['a', '...', 'z'], ['a', 'b', 'c', 'z'])).toBe(true);
    expect(linesMatch(['a', '...', 'z'], ['a', 'z'])).toBe(true);
    expect(linesMatch(['a', '...'], ['b', 'c'])).toBe(false);
    expect(linesMatch(['...', 'y', '...'], ['x', 'y', 'y', 'z'])).toBe(true);
    expect(linesMatch(['a ...', '...'], ['a b', 'c', 'd'])).toBe(true);
  });
});

describe('lineMatches', () => {
  it('is equality, ... within a line matching any text there', () => {
    expect(lineMatches('<age> Normal Populated namespace/shop-a ...', '<age> Normal Populated namespace/shop-a applied 6, created 0')).toBe(true);
    expect(lineMatches('<age> Normal Populated namespace/shop-a ...', '<age> Warning Failed namespace/shop-a quota')).toBe(false);
    expect(lineMatches('a ... (b) ... c', 'a x (b) y c')).toBe(true);
    expect(lineMatches('a (b) c', 'a xbx c')).toBe(false);
    expect(lineMatches('Waiting...', 'Waiting...')).toBe(true);
  });
});

describe('asUserSees', () => {
  it("shows the walk's state folder as .furnish and its HOME as ~", () => {
    expect(asUserSees('rows in /tmp/furnish-docs-x/state/billing.sqlite; /tmp/furnish-docs-x/home/.kube', { stateDir: '/tmp/furnish-docs-x/state', home: '/tmp/furnish-docs-x/home' }))
      .toBe('rows in .furnish/billing.sqlite; ~/.kube');
  });
});

describe('lineDiff', () => {
  it('marks the docs\' lines -, the run\'s +, common lines with two spaces', () => {
    expect(lineDiff(['NAME', 'team-a', 'team-b'], ['NAME', 'team-a', 'team-c'])).toEqual(['  NAME', '  team-a', '- team-b', '+ team-c']);
    expect(lineDiff([], ['x'])).toEqual(['+ x']);
    expect(lineDiff(['NAME ...', 'gone'], ['NAME STATUS', 'here'])).toEqual(['  NAME STATUS', '- gone', '+ here']);
  });
});

describe('judgeBlock and failureReport', () => {
  const block: RunnableBlock = { page: 'docs/guide/namespaces.md', line: 12, command: 'kubectl get namespace team-a', expectFail: false, output: { line: 16, text: 'NAME STATUS AGE\nteam-a Active 5s' } };

  it('passes a block that exits 0 and prints its output, whatever the age', () => {
    expect(judgeBlock(block, { status: 0, output: 'NAME     STATUS   AGE\nteam-a   Active   2m\n' })).toBeUndefined();
  });

  it('fails a non-zero exit, a zero exit of an expect-fail block, a timeout, and a different output', () => {
    expect(judgeBlock(block, { status: 1, output: 'Error' })).toEqual({ reason: 'it exited 1' });
    expect(judgeBlock({ ...block, expectFail: true, output: undefined }, { status: 0, output: '' })).toEqual({ reason: 'it is marked expect-fail but exited 0' });
    expect(judgeBlock({ ...block, expectFail: true, output: undefined }, { status: 1, output: 'Error' })).toBeUndefined();
    expect(judgeBlock(block, { status: null, output: '', timedOut: true })).toEqual({ reason: 'it did not finish in time and was killed' });
    expect(judgeBlock(block, { status: 0, output: 'NAME STATUS AGE\nteam-a Terminating 5s' })).toEqual({
      reason: 'its output differs from the output block at line 16 (after normalising)',
      diff: ['  NAME STATUS AGE', '- team-a Active <age>', '+ team-a Terminating <age>'],
    });
  });

  it('reports page, line, command and the diff, or what it printed', () => {
    const run = { status: 0, output: 'NAME STATUS AGE\nteam-a Terminating 5s' };
    expect(failureReport(block, run, judgeBlock(block, run)!)).toBe(page(
      'FAIL docs/guide/namespaces.md:12: its output differs from the output block at line 16 (after normalising)',
      '  command:',
      '    kubectl get namespace team-a',
      '  diff (- the docs, + this run):',
      '      NAME STATUS AGE',
      '    - team-a Active <age>',
      '    + team-a Terminating <age>',
    ));
    expect(failureReport(block, { status: 2, output: '' }, { reason: 'it exited 2' })).toBe(page(
      'FAIL docs/guide/namespaces.md:12: it exited 2', '  command:', '    kubectl get namespace team-a', '  printed:', '    (nothing)',
    ));
  });
});

describe('docs/guide/ and the fixture guide', () => {
  it.each(['docs/guide', 'test/fixtures/docs-guide'])('%s follows the conventions: every page with runnable blocks linked from its README, every mark known, every output block after a runnable one', (folder) => {
    const guide = readGuide(ROOT, join(ROOT, folder));
    expect(guide.pages[0]).toBe('README.md');
    expect(guide.blocks.length).toBeGreaterThan(0);
  });

  it('the fixture guide walks its pages in the order of its README', () => {
    expect(readGuide(ROOT, join(ROOT, 'test/fixtures/docs-guide')).blocks.map((b) => `${b.page}:${b.line}${b.expectFail ? ' expect-fail' : ''}${b.output ? ` output@${b.output.line}` : ''}`)).toEqual([
      'test/fixtures/docs-guide/namespaces.md:5 output@9',
      'test/fixtures/docs-guide/namespaces.md:15 output@21',
      'test/fixtures/docs-guide/namespaces.md:30 output@34',
      'test/fixtures/docs-guide/namespaces.md:40 expect-fail output@44',
      'test/fixtures/docs-guide/namespaces.md:50 expect-fail output@54',
      'test/fixtures/docs-guide/stale.md:5 output@9',
      'test/fixtures/docs-guide/stale.md:15',
    ]);
  });
});
