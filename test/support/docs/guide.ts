// A guide folder read as the walk reads it (scripts/docs-run.ts, and the unit test that checks
// docs/guide/ follows the conventions without starting anything).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { DocsError } from './markdown.ts';
import { guideOrder, runnableBlocks, unlistedPages, type RunnableBlock } from './runnable.ts';

/**
 * Every runnable block of the guide in walk order, pages named relative to `root`; the first
 * breach of the conventions (docs/testing-the-docs.md) is thrown as a DocsError.
 */
export function readGuide(root: string, guideDir: string): { blocks: RunnableBlock[]; pages: string[] } {
  const shown = (page: string) => relative(root, join(guideDir, page));
  if (!existsSync(join(guideDir, 'README.md'))) throw new DocsError(shown('README.md'), 1, 'no such file: the guide\'s README.md lists its pages in walk order');
  const order = guideOrder(readFileSync(join(guideDir, 'README.md'), 'utf8'));
  const blocksOf = (page: string) => runnableBlocks(shown(page), readFileSync(join(guideDir, page), 'utf8'));
  const missing = order.filter((page) => !existsSync(join(guideDir, page)));
  if (missing.length > 0) throw new DocsError(shown('README.md'), 1, `links ${missing.join(', ')}, which does not exist`);
  const all = readdirSync(guideDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.md'));
  const unlisted = unlistedPages(order, all.filter((p) => blocksOf(p).length > 0));
  if (unlisted.length > 0) throw new DocsError(shown('README.md'), 1, `does not link ${unlisted.join(', ')}, which ${unlisted.length > 1 ? 'have' : 'has'} runnable blocks: the walk would never run them`);
  return { blocks: order.flatMap(blocksOf), pages: order };
}
