// Benchmarks that run Furnish's processes (the relay, the reconcilers) as children of their own, so
// that each memory figure is that process's alone: a child answers the driver's commands over IPC
// and samples its own memory. The pattern of population.bench.ts, shared.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { constants, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import { readRssParts } from './rss-parts.ts';

export interface MemorySample {
  /** Highest RSS of the process's life (getrusage), MB. */
  maxRssMb: number;
  /** Highest heapUsed sampled (every 50 ms) since the last reset, garbage included. */
  peakHeapMb: number;
  /** heapUsed right after a full GC: what the process really holds. */
  retainedHeapMb: number;
  /** Exact heapUsed after GC, bytes (for bytes per namespace). */
  retainedHeapBytes: number;
  rssMb: number;
  /** Highest RSS sampled (every 50 ms) since the last reset, MB. */
  peakRssMb: number;
  /** Outside the JS heap: C++ objects bound to JS (`external`, Buffers included) and ArrayBuffers alone. */
  externalMb: number;
  arrayBuffersMb: number;
  /** V8's heap spaces after GC, MB committed (where the heap's RSS is). */
  spaces: Record<string, number>;
  /** Time spent in garbage collection since the last reset, ms: scavenges (young generation) and the rest. */
  gcMs: { minor: number; major: number };
  /**
   * RSS by owner, MB (Linux): V8's heap (committed, after GC), malloc's arenas (`[heap]` and the
   * others, with how many), other anonymous memory (stacks, V8's code and own regions), and
   * file-backed pages (binary, libraries). Absent where there is no /proc.
   */
  parts?: { v8Mb: number; mallocMb: number; arenas: number; otherAnonMb: number; fileMb: number };
}

const mb = (bytes: number) => Math.round(bytes / 1048576);
const gc = (globalThis as { gc?: () => void }).gc;

/** Memory figures of this process; children are forked with --expose-gc (inherited execArgv). */
export function memorySampler(): { reset(): void; read(): Promise<MemorySample> } {
  let peak = 0;
  let peakRss = 0;
  const sample = () => {
    const m = process.memoryUsage();
    peak = Math.max(peak, m.heapUsed);
    peakRss = Math.max(peakRss, m.rss);
  };
  const t = setInterval(sample, 50);
  t.unref();
  let gcMs = { minor: 0, major: 0 };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const minor = ((e as PerformanceEntry & { detail?: { kind?: number } }).detail)?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
      gcMs = minor ? { ...gcMs, minor: gcMs.minor + e.duration } : { ...gcMs, major: gcMs.major + e.duration };
    }
  }).observe({ entryTypes: ['gc'] });
  return {
    reset: () => {
      gc?.();
      gcMs = { minor: 0, major: 0 };
      peak = process.memoryUsage().heapUsed;
      peakRss = process.memoryUsage().rss;
    },
    read: async () => {
      sample();
      const sampledPeak = peak;
      const gcTime = { minor: Math.round(gcMs.minor), major: Math.round(gcMs.major) };
      // Twice, a moment apart: V8 sweeps and releases freed pages concurrently after the first.
      gc?.();
      await new Promise((r) => setTimeout(r, 200));
      gc?.();
      const { getHeapSpaceStatistics } = await import('node:v8');
      const m = process.memoryUsage();
      const stats = getHeapSpaceStatistics();
      const spaces = Object.fromEntries(stats.map((s) => [s.space_name, mb(s.physical_space_size)]));
      const v8 = stats.reduce((a, s) => a + s.physical_space_size, 0);
      const p = readRssParts();
      const malloc = p ? p.mallocMain + p.mallocArenas : 0;
      const parts = p && { v8Mb: mb(v8), mallocMb: mb(malloc), arenas: p.arenaCount, otherAnonMb: mb(p.anon - malloc - v8), fileMb: mb(p.file) };
      return {
        parts, maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024), peakHeapMb: mb(sampledPeak), retainedHeapMb: mb(m.heapUsed), retainedHeapBytes: m.heapUsed, rssMb: mb(m.rss), peakRssMb: mb(peakRss), externalMb: mb(m.external), arrayBuffersMb: mb(m.arrayBuffers), spaces, gcMs: gcTime };
    },
  };
}

export type IpcHandler = (msg: { cmd: string; arg?: unknown }) => Promise<unknown>;

/** In a child: answers the driver's commands; `ready` tells the driver it may ask. */
export function serveIpc(handler: IpcHandler): void {
  process.on('message', (m: { id: number; cmd: string; arg?: unknown }) => {
    void handler(m).then((result) => process.send!({ id: m.id, result }), (e: Error) => process.send!({ id: m.id, error: e.stack }));
  });
  // The driver gone (killed, crashed): nothing left to answer to.
  process.once('disconnect', () => process.exit(0));
  process.send!({ ready: true });
}

export interface Child {
  proc: ChildProcess;
  ask<T>(cmd: string, arg?: unknown): Promise<T>;
  /** SIGTERM, then waits for the exit. */
  stop(): Promise<void>;
}

/** Forks `module` with `role` as its argument and waits until it serves IPC. */
export async function spawnRole(module: string, role: string, env: Record<string, string>, execArgv: string[] = []): Promise<Child> {
  const proc = fork(module, [role], { env: { ...process.env, ...env }, execArgv: [...process.execArgv, ...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let next = 0;
  const waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  await new Promise<void>((resolve, reject) => {
    proc.once('exit', (code) => {
      reject(new Error(`${role} exited with ${code}`));
      for (const w of waiting.values()) w.reject(new Error(`${role} exited with ${code}`));
    });
    proc.on('message', (m: { ready?: boolean; id?: number; result?: unknown; error?: string }) => {
      if (m.ready) return resolve();
      const w = waiting.get(m.id!);
      waiting.delete(m.id!);
      if (m.error) w?.reject(new Error(m.error));
      else w?.resolve(m.result);
    });
  });
  return {
    proc,
    ask: <T>(cmd: string, arg?: unknown) =>
      new Promise<T>((resolve, reject) => {
        const id = ++next;
        waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
        proc.send({ id, cmd, arg });
      }),
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

/** Whether a bus is idle now (or within 20 ms). */
export function idleNow(bus: { idle(): Promise<void> }): Promise<boolean> {
  return Promise.race([bus.idle().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 20))]);
}

/** Until every child answers `idle` true three times in a row, 100 ms apart. */
export async function waitIdle(children: Child[]): Promise<void> {
  for (let quiet = 0; quiet < 3; ) {
    let idle = true;
    for (const c of children) idle = (await c.ask<boolean>('idle')) && idle;
    quiet = idle ? quiet + 1 : 0;
    await new Promise((r) => setTimeout(r, 100));
  }
}

export const ratio = (value: number, baseline: number): string => `${(value / baseline).toFixed(2)}x`;

/** CPU time (user + system, ms) of a process so far, from /proc (Linux, clock ticks of 10 ms). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}
