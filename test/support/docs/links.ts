// Links between the docs resolve: every relative link names a file or directory of the repository,
// and every `#anchor` into a Markdown page (or within one) names a heading of it as GitHub renders
// it. Pure: the caller says how to read a page and whether a path exists.
import { posix } from 'node:path';
import { isExternal, markdownLinks, pageAnchors } from './markdown.ts';

export interface Repository {
  /** A path relative to the repository: 'file', 'dir', or undefined when absent. */
  kind(path: string): 'file' | 'dir' | undefined;
  read(path: string): string;
}

/** Where a link of `page` points, relative to the repository (`/x` is the repository's root, as on GitHub). */
export function resolveLink(page: string, target: string): { path: string; anchor?: string } {
  const hash = target.indexOf('#');
  const rawPath = hash < 0 ? target : target.slice(0, hash);
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const decoded = decodeURIComponent(rawPath.split('?')[0]!);
  const path = decoded === '' ? page : decoded.startsWith('/') ? posix.normalize(decoded.slice(1)) : posix.join(posix.dirname(page), decoded);
  return anchor === undefined ? { path } : { path, anchor };
}

/** Each broken link of `pages`, as `page:line: target: why`. */
export function brokenLinks(pages: readonly string[], repo: Repository): string[] {
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    if (!anchorsOf.has(path)) anchorsOf.set(path, pageAnchors(path, repo.read(path)));
    return anchorsOf.get(path)!;
  };
  const problems: string[] = [];
  for (const page of pages) {
    for (const { line, target } of markdownLinks(page, repo.read(page))) {
      if (isExternal(target)) continue;
      const { path, anchor } = resolveLink(page, target);
      const where = `${page}:${line}: ${target}`;
      if (path.startsWith('../') || path === '..') problems.push(`${where}: leaves the repository`);
      else if (!repo.kind(path)) problems.push(`${where}: ${path} does not exist`);
      else if (anchor !== undefined && anchor !== '' && path.endsWith('.md') && repo.kind(path) === 'file' && !anchors(path).has(anchor)) {
        problems.push(`${where}: ${path} has no heading whose anchor is #${anchor}`);
      }
    }
  }
  return problems;
}
