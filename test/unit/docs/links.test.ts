// The docs' links resolve (issue 28: the docs cannot go stale): every relative link and anchor in
// README.md, CONTRIBUTING.md and docs/**/*.md names a file that exists and, for `#anchor`, a
// heading of that page by GitHub's slug. External links are not fetched.
import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { brokenLinks, resolveLink, type Repository } from '../../support/docs/links.ts';
import { githubSlug, markdownLinks, pageAnchors } from '../../support/docs/markdown.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

/** README.md, CONTRIBUTING.md (once it exists) and every Markdown page under docs/. */
function docPages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md')).map((f) => relative(ROOT, join(ROOT, 'docs', f)));
  return [...['README.md', 'CONTRIBUTING.md'].filter((f) => existsSync(join(ROOT, f))), ...docs.sort()];
}

const onDisk: Repository = {
  kind(path) {
    if (!existsSync(join(ROOT, path))) return undefined;
    return statSync(join(ROOT, path)).isDirectory() ? 'dir' : 'file';
  },
  read: (path) => readFileSync(join(ROOT, path), 'utf8'),
};

/** A repository held in memory: path → content ('' content with a trailing / is a directory). */
function inMemory(files: Record<string, string>): Repository {
  return {
    kind: (path) => (path in files ? 'file' : Object.keys(files).some((f) => f.startsWith(`${path}/`)) ? 'dir' : undefined),
    read: (path) => files[path] ?? '',
  };
}

describe('the links of README.md, CONTRIBUTING.md and docs/', () => {
  it('reads the pages', () => {
    expect(docPages()).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md']));
  });

  it('every relative link names an existing file, and every anchor a heading of its page', () => {
    expect(brokenLinks(docPages(), onDisk)).toEqual([]);
  });
});

describe('githubSlug', () => {
  it('is what GitHub gives a heading', () => {
    expect(githubSlug('Run it locally')).toBe('run-it-locally');
    expect(githubSlug('Where is X decided')).toBe('where-is-x-decided');
    expect(githubSlug('`furnish render` -o json')).toBe('furnish-render--o-json');
    expect(githubSlug('Organizations (preview)')).toBe('organizations-preview');
    expect(githubSlug('ADR 0009: population, one source of truth')).toBe('adr-0009-population-one-source-of-truth');
    expect(githubSlug('[Install](install.md) and GKE')).toBe('install-and-gke');
    expect(githubSlug('snake_case and _emphasis_')).toBe('snake_case-and-emphasis');
    expect(githubSlug('Ünïcode & “quotes”')).toBe('ünïcode--quotes');
  });
});

describe('pageAnchors', () => {
  it('has each heading once, repeats numbered, setext headings and HTML ids; nothing in code', () => {
    const page = [
      '# Title', '', '## Usage', 'text', '## Usage', '', 'Setext heading', '--------------', '',
      '<a name="kept"></a>', '```sh', '# not a heading', '```', '### Closed ATX ###',
    ].join('\n');
    expect([...pageAnchors('p.md', page)].sort()).toEqual(['closed-atx', 'kept', 'setext-heading', 'title', 'usage', 'usage-1']);
  });
});

describe('markdownLinks', () => {
  it('finds inline links, images, definitions and HTML links with their lines, none in code', () => {
    const page = [
      'See [a](a.md) and ![img](img/x.png "title").', '`[not](code.md)`', '```', '[not](fence.md)', '```',
      '[ref]: ./ref.md#part', '<a href="html.md">h</a> [ext](https://example.com) [angle](<with space.md>)',
    ].join('\n');
    expect(markdownLinks('p.md', page)).toEqual([
      { line: 1, target: 'a.md' }, { line: 1, target: 'img/x.png' }, { line: 6, target: './ref.md#part' },
      { line: 7, target: 'https://example.com' }, { line: 7, target: 'with space.md' }, { line: 7, target: 'html.md' },
    ]);
  });
});

describe('resolveLink', () => {
  it('resolves against the page, the repository root for /, the page itself for #anchor', () => {
    expect(resolveLink('docs/guide/a.md', '../operate/b.md#x')).toEqual({ path: 'docs/operate/b.md', anchor: 'x' });
    expect(resolveLink('docs/guide/a.md', '/README.md')).toEqual({ path: 'README.md' });
    expect(resolveLink('docs/guide/a.md', '#here')).toEqual({ path: 'docs/guide/a.md', anchor: 'here' });
    expect(resolveLink('README.md', 'docs/my%20page.md')).toEqual({ path: 'docs/my page.md' });
  });
});

describe('brokenLinks', () => {
  const repo = inMemory({
    'README.md': '# Furnish\n[guide](docs/guide/README.md) [gone](docs/gone.md) [top](#furnish) [nope](#nope)\n[deep](docs/guide/README.md#walk-order) [bad](docs/guide/README.md#missing) [dir](examples) [src](shared/x.ts#L3) [out](../elsewhere.md)',
    'docs/guide/README.md': '# Guide\n## Walk order\n[back](../../README.md#furnish)',
    'examples/a.yaml': '',
    'shared/x.ts': '',
  });

  it('names each missing file, missing anchor and link out of the repository, with page and line', () => {
    expect(brokenLinks(['README.md', 'docs/guide/README.md'], repo)).toEqual([
      'README.md:2: docs/gone.md: docs/gone.md does not exist',
      'README.md:2: #nope: README.md has no heading whose anchor is #nope',
      'README.md:3: docs/guide/README.md#missing: docs/guide/README.md has no heading whose anchor is #missing',
      'README.md:3: ../elsewhere.md: leaves the repository',
    ]);
  });
});
