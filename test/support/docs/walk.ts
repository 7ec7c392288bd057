// The pure parts of the docs walk (scripts/docs-run.ts): its command line, how it starts the stack
// exactly as `npm start` does, the environment each block runs in, and what it says at the end.
import { delimiter, join } from 'node:path';

export interface WalkOptions {
  /** The guide's folder (its README.md lists the pages in walk order). */
  guide: string;
  /** Stop at the first failed block. */
  bail: boolean;
  /** Each block's time limit. */
  blockTimeoutSeconds: number;
}

export const WALK_USAGE = 'usage: npm run test:docs [-- [<guide folder, default docs/guide>] [--bail] [--timeout <seconds per block, default 120>]]';

/** The command line, or a message saying what is wrong with it. */
export function parseWalkArgs(argv: readonly string[]): WalkOptions | { error: string } {
  const options: WalkOptions = { guide: 'docs/guide', bail: false, blockTimeoutSeconds: 120 };
  const folders: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (arg === '--bail') options.bail = true;
    else if (arg === '--timeout') {
      const seconds = Number(argv[i + 1]);
      if (!Number.isFinite(seconds) || seconds <= 0) return { error: `--timeout needs a number of seconds, got ${JSON.stringify(argv[i + 1] ?? '')}` };
      options.blockTimeoutSeconds = seconds;
      i += 1;
    } else if (arg.startsWith('-')) return { error: `unknown option ${arg}` };
    else folders.push(arg);
  }
  if (folders.length > 1) return { error: `one guide folder, got ${folders.join(' ')}` };
  return { ...options, guide: folders[0] ?? options.guide };
}

/**
 * node's arguments for package.json's `start` script (`node <flags> scripts/start.ts`): the walk
 * runs what `npm start` runs, with its flags, read from the one place they are written.
 */
export function npmStartNodeArgs(startScript: string): string[] {
  const [command, ...args] = startScript.trim().split(/\s+/);
  if (command !== 'node' || args.length === 0 || args.some((a) => /["'$&|;<>`]/.test(a))) {
    throw new Error(`package.json's start script is no longer \`node <flags> <script>\` (${JSON.stringify(startScript)}): teach scripts/docs-run.ts to run it`);
  }
  return args;
}

/**
 * Each block's environment: the user's, with the stack's kubeconfig, a HOME of the walk's own
 * (kubectl's cache and npm's files stay out of the user's), and PATH as `npm run` gives it
 * (node_modules/.bin first, so `npx --no furnish` and node are the project's).
 */
export function blockEnv(base: Readonly<Record<string, string | undefined>>, at: { root: string; nodeDir: string; kubeconfig: string; home: string }): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(base)) if (v !== undefined) env[k] = v;
  return { ...env, KUBECONFIG: at.kubeconfig, HOME: at.home, PATH: [join(at.root, 'node_modules', '.bin'), at.nodeDir, base.PATH ?? '/usr/bin:/bin'].join(delimiter) };
}

/** Lines `git status --porcelain` shows after the walk and not before it: what the walk left in the clone. */
export function leftInClone(before: string, after: string): string[] {
  const seen = new Set(before.split('\n').filter(Boolean));
  return after.split('\n').filter((l) => l && !seen.has(l));
}

/** The last line of a walk. */
export function walkSummary(counts: { blocks: number; pages: number; failed: number; notRun: number; problems: number }, seconds: { start: number; blocks: number; stop: number }): string {
  const blocks = counts.failed === 0 && counts.notRun === 0 ? 'all passed' : `${counts.failed} failed${counts.notRun ? `, ${counts.notRun} not run` : ''}`;
  const verdict = counts.problems === 0 ? blocks : `${blocks}; ${counts.problems} other failure${counts.problems > 1 ? 's' : ''} (above)`;
  const t = (s: number) => `${s.toFixed(1)} s`;
  return `docs: ${counts.blocks} runnable blocks on ${counts.pages} pages: ${verdict} (stack start ${t(seconds.start)}, blocks ${t(seconds.blocks)}, stop ${t(seconds.stop)})`;
}
