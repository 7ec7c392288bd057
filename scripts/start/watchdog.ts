// The watchdog of `npm start`'s webhook registrations (docs/adr/0010). They fail closed, as deployed
// ones do; pointing at a local server, they would lock everyone out of namespace writes once that
// server is gone. So before any is written, `npm start` starts this process in a session of its own
// (a SIGKILL of npm start, or of its whole process group, does not reach it), holding the read end
// of a pipe whose write end only npm start holds. However npm start ends, the kernel closes that
// pipe; unless npm start said `release` first (it removed them itself), the watchdog deletes the
// registrations labelled with this run's id, right away and once more after SETTLE_MS (a write
// still in flight when npm start died), then exits. Run as a script: `node watchdog.ts '<json>'`.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { connect, createKubeClient, type Credentials, type KubeClient } from '../../shared/kube/client.ts';
import { jsonLogger, type Logger } from '../../shared/log.ts';
import { removeRunCommand, removeRunRegistrations } from '../local-registrations.ts';

/** After npm start is gone, the second sweep: longer than a registration write the API server may still be finishing. */
export const SETTLE_MS = 3_000;
/** How long the watchdog keeps trying while the cluster does not answer (offline, restarting), before it gives up and says what to run. */
export const GIVE_UP_MS = 5 * 60_000;
/** What npm start writes on the pipe once it removed its registrations itself. */
const RELEASE = 'release';
/** What the watchdog writes once it can list registrations: npm start may write them from then on. */
const READY = 'ready';

/** The wait before the next sweep after `failures` failed ones, `elapsedMs` after the first; undefined: give up. */
export function sweepRetryDelay(failures: number, elapsedMs: number): number | undefined {
  if (elapsedMs >= GIVE_UP_MS) return undefined;
  return Math.min(5_000, 250 * 2 ** (failures - 1));
}

export interface RegistrationWatchdog {
  /** The value of the KEY.localRun label the registrations of this run carry. */
  runId: string;
  pid: number;
  /** npm start removed its registrations itself: the watchdog exits without a sweep. */
  release(): void;
}

interface WatchdogArgs extends Credentials {
  runId: string;
  /** npm start's pid, for the messages. */
  parent: number;
  /** The cluster's process when npm start runs it (its kube-sim, which ends with npm start): once it is gone, nothing is left to remove. */
  clusterPid?: number;
}

/**
 * Starts the watchdog and waits until it can list webhook registrations with these credentials
 * (the installing admin's). Throws, and then nothing may be registered, when it cannot.
 */
export async function startRegistrationWatchdog(creds: Credentials, log: Logger, o: { clusterPid?: number; readyTimeoutMs?: number } = {}): Promise<RegistrationWatchdog> {
  const readyTimeoutMs = o.readyTimeoutMs ?? 30_000;
  const args: WatchdogArgs = { runId: randomBytes(6).toString('hex'), parent: process.pid, ...creds, ...(o.clusterPid !== undefined ? { clusterPid: o.clusterPid } : {}) };
  const child = spawn(process.execPath, [import.meta.filename, JSON.stringify(args)], { detached: true, stdio: ['pipe', 'pipe', 'inherit'] });
  await untilReady(child, readyTimeoutMs);
  const stdin = child.stdin!;
  stdin.on('error', () => {}); // a watchdog gone: said by 'exit' below
  // Neither it nor the pipe keeps this process alive; the pipe stays open as long as this process lives.
  child.unref();
  (stdin as unknown as Socket).unref();
  let released = false;
  child.once('exit', (code, signal) => {
    if (!released) log.log('WARNING', 'the webhook registrations\' watchdog exited: if npm start is killed now, its registrations stay until the next npm start', { pid: child.pid, code, signal, byHand: removeRunCommand(args.runId) });
  });
  log.log('INFO', 'webhook registrations\' watchdog started: it removes them if npm start is killed', { pid: child.pid, runId: args.runId });
  return {
    runId: args.runId,
    pid: child.pid!,
    release() {
      released = true;
      stdin.end(`${RELEASE}\n`);
    },
  };
}

function untilReady(child: ChildProcess, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let out = '';
    const fail = (why: string) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(new Error(`the watchdog that removes npm start's webhook registrations if npm start is killed ${why}: not registering webhooks that could lock the cluster (its error is on stderr above)`));
    };
    const timer = setTimeout(() => fail(`was not ready within ${timeoutMs} ms`), timeoutMs);
    child.once('exit', (code, signal) => fail(`exited (${signal ?? `code ${code}`})`));
    child.once('error', (e) => fail(`did not start (${e.message})`));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (!out.includes(`${READY}\n`)) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout!.destroy();
      resolve();
    });
  });
}

/** Everything written on stdin until it closes (npm start gone, or it released us). */
function untilStdinCloses(): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    process.stdin.on('data', (d: Buffer) => void (text += d.toString()));
    process.stdin.once('close', () => resolve(text));
    process.stdin.once('error', () => resolve(text));
  });
}

/** Whether process `pid` exists (signal 0 only checks). */
function alive(pid: number): boolean {
  try {
    return process.kill(pid, 0);
  } catch {
    return false;
  }
}

/** What the sweep answers when the cluster itself is gone: nothing of this run remains to remove. */
const CLUSTER_GONE = 'cluster-gone';

/** One sweep, tried again while the cluster does not answer, until GIVE_UP_MS after `since`. */
async function sweep(kube: KubeClient, args: WatchdogArgs, since: number): Promise<string[] | typeof CLUSTER_GONE> {
  for (let failures = 1; ; failures++) {
    try {
      return await removeRunRegistrations(kube, args.runId);
    } catch (e) {
      if (args.clusterPid !== undefined && !alive(args.clusterPid)) return CLUSTER_GONE;
      const wait = sweepRetryDelay(failures, Date.now() - since);
      if (wait === undefined) throw e;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/** The watchdog's requests, told apart in an audit log (test/integration/identity.test.ts). */
export const WATCHDOG_USER_AGENT = 'furnish-local-watchdog';

async function main(args: WatchdogArgs): Promise<number> {
  // Its messages go to npm start's stderr (a terminal that may be closed by then: nothing else to tell).
  process.stderr.on('error', () => {});
  const log = jsonLogger('furnish-local-watchdog', (l) => process.stderr.write(l));
  const kube = createKubeClient(await connect(args), { retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 }, timeoutMs: 10_000, userAgent: WATCHDOG_USER_AGENT });
  // Nothing carries this run's id yet: this proves the credentials can list what the sweep lists.
  await removeRunRegistrations(kube, args.runId);
  process.stdout.write(`${READY}\n`);
  const said = await untilStdinCloses();
  if (said.includes(RELEASE)) return 0;
  const since = Date.now();
  try {
    const removed: string[] = [];
    for (const pause of [0, SETTLE_MS]) {
      await new Promise((r) => setTimeout(r, pause));
      const swept = await sweep(kube, args, since);
      if (swept === CLUSTER_GONE) {
        log.log('INFO', `npm start (pid ${args.parent}) ended, and the cluster it ran (pid ${args.clusterPid}) with it: no registration is left`, { runId: args.runId });
        return 0;
      }
      removed.push(...swept);
    }
    log.log('WARNING', `npm start (pid ${args.parent}) ended without removing its webhook registrations: removed them`, { registrations: removed, runId: args.runId });
    return 0;
  } catch (e) {
    log.log('ERROR', `npm start (pid ${args.parent}) ended without removing its webhook registrations, and they could not be removed: they fail closed, so run \`${removeRunCommand(args.runId)}\``, { error: (e as Error).message, runId: args.runId });
    return 1;
  } finally {
    kube.close();
  }
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const args = JSON.parse(process.argv[2] ?? '{}') as WatchdogArgs;
  process.exitCode = await main(args).catch((e: unknown) => {
    process.stderr.write(`furnish-local-watchdog: ${(e as Error).message}\n`);
    return 1;
  });
  process.exit();
}
