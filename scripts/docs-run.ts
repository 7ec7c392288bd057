// `npm run test:docs [-- <guide folder>] [--bail] [--timeout <s>]`: the guide cannot go stale
// (issue 28). Starts ONE stack exactly as `npm start` does on a machine with no cluster (package.json's
// start script with its node flags; no KUBECONFIG and a HOME of its own, so it starts its own
// kube-sim and runs every component under its deployed identity), then runs every ```sh runnable
// block of the guide's pages in the order the guide's README.md links them, each in a fresh
// `bash -euo pipefail` at the repository's root with KUBECONFIG set to the stack's cluster and PATH
// giving kubectl and `npx --no furnish`. A block must exit 0 (non-zero when marked expect-fail);
// a ```text output block right after it is compared with what it printed, after normalising
// (test/support/docs/runnable.ts). Each failure is printed with page, line, command and diff. Then
// the stack is stopped with Ctrl-C's signal and must exit 0, its state (outside the clone, the
// billing SQLite file too: walkSettings) is removed, and `git status` must show nothing new. Exit 0 all passed, 1 a block or the stack
// failed, 2 bad usage or a page that breaks the conventions (docs/testing-the-docs.md).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { DocsError } from '../test/support/docs/markdown.ts';
import { readGuide } from '../test/support/docs/guide.ts';
import { asUserSees, failureReport, judgeBlock, type BlockRun, type RunnableBlock } from '../test/support/docs/runnable.ts';
import { blockEnv, leftInClone, npmStartNodeArgs, parseWalkArgs, WALK_USAGE, walkSummary } from '../test/support/docs/walk.ts';

const ROOT = resolve(import.meta.dirname, '..');
const STACK_START_TIMEOUT_MS = 180_000;
const STACK_STOP_TIMEOUT_MS = 30_000;

function gitStatus(): string | undefined {
  const r = spawnSync('git', ['-C', ROOT, 'status', '--porcelain', '--untracked-files=all', '--ignored=matching'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout : undefined;
}

interface Stack {
  child: ChildProcess;
  /** Its cluster's kubeconfig, once it says Furnish is running. */
  ready: Promise<string>;
  /** The last of what it printed (its JSON logs), for a report. */
  tail(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** `npm start`, as a user on a machine without a cluster runs it, with its state under `tmp` and all it prints in `logPath`. */
function startStack(tmp: string, home: string, logPath: string): Stack {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const { KUBECONFIG: _unset, ...env } = process.env;
  const child = spawn(process.execPath, npmStartNodeArgs(pkg.scripts.start!), {
    cwd: ROOT,
    env: { ...env, ...walkSettings(tmp), HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Out of the terminal's process group: Ctrl-C reaches the walk, which stops the stack once (a
    // second SIGINT would kill npm start before it unregisters its webhooks and stops its cluster).
    detached: true,
  });
  let seen = '';
  const log = createWriteStream(logPath);
  const keep = (d: Buffer) => {
    log.write(d);
    seen = (seen + d.toString()).slice(-64_000);
  };
  child.once('close', () => log.end());
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const tail = () => seen.split('\n').slice(-40).join('\n');
  const ready = new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`npm start was not running after ${STACK_START_TIMEOUT_MS / 1000} s; it printed:\n${tail()}`)), STACK_START_TIMEOUT_MS);
    const check = () => {
      const path = /export KUBECONFIG=(\S+)/.exec(seen)?.[1];
      if (path && seen.includes('Furnish is running')) {
        clearTimeout(timer);
        ok(path);
      }
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      fail(new Error(`npm start exited (${code ?? signal}) before it was running; it printed:\n${tail()}`));
    });
  });
  return { child, ready, tail, exited };
}

/** Ctrl-C, as a user stops it: it must unregister, stop its cluster and exit 0. */
async function stopStack(stack: Stack): Promise<string | undefined> {
  if (stack.child.exitCode !== null || stack.child.signalCode !== null) return `npm start had exited (${stack.child.exitCode ?? stack.child.signalCode}) before the walk ended; it printed:\n${stack.tail()}`;
  stack.child.kill('SIGINT');
  const timer = setTimeout(() => stack.child.kill('SIGKILL'), STACK_STOP_TIMEOUT_MS);
  const { code, signal } = await stack.exited;
  clearTimeout(timer);
  return code === 0 ? undefined : `npm start did not stop cleanly on SIGINT (${code ?? signal}); it printed:\n${stack.tail()}`;
}

/**
 * Where the stack and the CLI keep their state during the walk: in its temporary folder, not in the
 * clone's `.furnish/` (a user's own npm start state, and billing rows that would change the
 * reports' figures from one walk to the next), nor a sink the user's environment names.
 */
function walkSettings(tmp: string): { FURNISH_STATE_DIR: string; FURNISH_BILLING: string } {
  return { FURNISH_STATE_DIR: join(tmp, 'state'), FURNISH_BILLING: `sqlite:${join(tmp, 'state', 'billing.sqlite')}` };
}

let running: ChildProcess | undefined;

function killProcessGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, signal);
  } catch {
    // The group is gone already.
  }
}

/** One block in a fresh bash, stdout and stderr into one file as a terminal interleaves them. */
function runBlock(block: RunnableBlock, env: Record<string, string>, outFile: string, timeoutMs: number): Promise<BlockRun> {
  const fd = openSync(outFile, 'w');
  // Its own process group: a timeout, or what it left running in the background, is ended whole.
  const child = spawn('bash', ['-euo', 'pipefail', '-c', block.command], { cwd: ROOT, env, stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  running = child;
  let timedOut = false;
  const killGroup = (signal: NodeJS.Signals) => killProcessGroup(child, signal);
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup('SIGKILL');
  }, timeoutMs);
  return new Promise((done) => {
    child.once('error', (e) => {
      clearTimeout(timer);
      running = undefined;
      done({ status: null, output: `bash could not be started: ${e.message}` });
    });
    child.once('exit', (status) => {
      clearTimeout(timer);
      killGroup('SIGTERM');
      running = undefined;
      done({ status, output: readFileSync(outFile, 'utf8'), ...(timedOut ? { timedOut } : {}) });
    });
  });
}

async function main(): Promise<number> {
  const options = parseWalkArgs(process.argv.slice(2));
  if ('error' in options) {
    process.stderr.write(`${options.error}\n${WALK_USAGE}\n`);
    return 2;
  }
  const guideDir = resolve(ROOT, options.guide);
  let guide: ReturnType<typeof readGuide>;
  try {
    guide = readGuide(ROOT, guideDir);
  } catch (e) {
    if (!(e instanceof DocsError)) throw e;
    process.stderr.write(`${e.message}\n(the conventions: docs/testing-the-docs.md)\n`);
    return 2;
  }
  if (guide.blocks.length === 0) {
    process.stderr.write(`${relative(ROOT, guideDir)}: no \`\`\`sh runnable block on any page the README links: nothing to check\n`);
    return 2;
  }
  const before = gitStatus();
  const tmp = mkdtempSync(join(tmpdir(), 'furnish-docs-'));
  const home = join(tmp, 'home');
  mkdirSync(home);
  // Beside the temporary folder: kept when something failed, for what the stack said meanwhile.
  const stackLog = `${tmp}-stack.log`;
  const t0 = performance.now();
  let stack: Stack | undefined;
  // Ctrl-C: the block running is ended, no other starts, and the walk cleans up as after its last.
  let interrupted = false;
  const interrupt = () => {
    interrupted = true;
    if (running) killProcessGroup(running, 'SIGKILL');
  };
  process.once('SIGINT', interrupt);
  process.once('SIGTERM', interrupt);
  const problems: string[] = [];
  let failed = 0;
  let ran = 0;
  let startSeconds = 0;
  let blockSeconds = 0;
  try {
    process.stdout.write(`docs: starting the stack as npm start does, then ${guide.blocks.length} runnable blocks of ${relative(ROOT, guideDir)}/ in walk order\n`);
    stack = startStack(tmp, home, stackLog);
    const kubeconfig = await Promise.race([stack.ready, until(() => interrupted)]);
    startSeconds = (performance.now() - t0) / 1000;
    const env = { ...blockEnv(process.env, { root: ROOT, nodeDir: dirname(process.execPath), kubeconfig, home }), ...walkSettings(tmp) };
    const walk = { stateDir: walkSettings(tmp).FURNISH_STATE_DIR, home };
    const tBlocks = performance.now();
    for (const block of guide.blocks) {
      if (stack.child.exitCode !== null || interrupted) break;
      const t = performance.now();
      const raw = await runBlock(block, env, join(tmp, 'block-output'), options.blockTimeoutSeconds * 1000);
      const run = { ...raw, output: asUserSees(raw.output, walk) };
      if (interrupted) break;
      ran += 1;
      const verdict = judgeBlock(block, run);
      const took = `${((performance.now() - t) / 1000).toFixed(1)} s`;
      if (verdict) {
        failed += 1;
        process.stdout.write(`${failureReport(block, run, verdict)}\n  (${took})\n`);
        if (options.bail) break;
      } else process.stdout.write(`ok   ${block.page}:${block.line}${block.expectFail ? ' (expect-fail)' : ''} (${took})\n`);
    }
    blockSeconds = (performance.now() - tBlocks) / 1000;
  } catch (e) {
    problems.push((e as Error).message);
  }
  const tStop = performance.now();
  if (stack) {
    const stopProblem = await stopStack(stack);
    if (stopProblem) problems.push(stopProblem);
  }
  const stopSeconds = (performance.now() - tStop) / 1000;
  rmSync(tmp, { recursive: true, force: true, maxRetries: 3 });
  const after = gitStatus();
  const left = before !== undefined && after !== undefined ? leftInClone(before, after) : [];
  if (left.length > 0) problems.push(`the walk left the clone changed (git status --porcelain; a block must write outside the clone, or clean up):\n${left.map((l) => `    ${l}`).join('\n')}`);
  for (const p of problems) process.stdout.write(`FAIL ${p}\n`);
  const passed = failed === 0 && problems.length === 0 && ran === guide.blocks.length;
  if (passed || interrupted) rmSync(stackLog, { force: true });
  else if (existsSync(stackLog)) process.stdout.write(`npm start's log during the walk (its JSON lines): ${stackLog}\n`);
  process.stdout.write(`${walkSummary({ blocks: guide.blocks.length, pages: guide.pages.length, failed, notRun: guide.blocks.length - ran, problems: problems.length }, { start: startSeconds, blocks: blockSeconds, stop: stopSeconds })}\n`);
  if (interrupted) {
    process.stdout.write('docs: interrupted\n');
    return 130;
  }
  return passed ? 0 : 1;
}

/** Never resolves; rejects once `stop()` holds (polled), so that a wait can be given up. */
function until(stop: () => boolean): Promise<never> {
  return new Promise((_, reject) => {
    const timer = setInterval(() => {
      if (!stop()) return;
      clearInterval(timer);
      reject(new Error('interrupted before npm start was running'));
    }, 100);
    timer.unref();
  });
}

process.exitCode = await main();
