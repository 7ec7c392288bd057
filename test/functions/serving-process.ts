// A webhook function served as in the cloud: the functions framework in its own process, with
// FUNCTION_TARGET naming the function (as Cloud Functions sets it), and what a request costs that
// process in memory: its peak RSS (VmHWM in /proc, reset before each measurement) above its RSS
// just before. Shared by the memory test and `npm run bench`.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const frameworkMain = join(root, 'node_modules', '@google-cloud', 'functions-framework', 'build', 'src', 'main.js');

export interface ServingProcess {
  pid: number;
  url: string;
  stop(): Promise<void>;
}

/** Whether per-process memory can be read here (Linux /proc). */
export const canMeasureProcessMemory = existsSync('/proc/self/status');

/** A port free right now (the framework takes a port number, not 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once('error', reject).listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

export async function startServingProcess(webhook: string, env: Record<string, string>, source = join(root, 'functions', webhook, 'index.ts')): Promise<ServingProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, [frameworkMain, `--target=${webhook}`, `--source=${source}`, `--port=${port}`], {
    env: { ...process.env, ...env, FUNCTION_TARGET: webhook, NODE_ENV: 'production' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  let exited = false;
  child.on('exit', () => (exited = true));
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; ; i++) {
    if (exited || i > 300) throw new Error(`${webhook} did not start: ${stderr}`);
    if (await fetch(`${url}healthz`).then((r) => r.ok, () => false)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    pid: child.pid!,
    url,
    stop: () => new Promise<void>((resolve) => {
      if (exited) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}

export function statusKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match?.[1] ?? NaN);
}

/** Resets the process's peak RSS to its current RSS (Linux clear_refs "5"); false where not allowed. */
export function resetPeak(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

export interface BodyOptions {
  bytes: number;
  /** Send Content-Length (else chunked transfer encoding). */
  withLength: boolean;
  authorization?: string;
}

/** Sends a body of `bytes` bytes, stopping as soon as an answer arrives; resolves with its status. */
export function sendBody(url: string, options: BodyOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (options.withLength) headers['content-length'] = String(options.bytes);
    if (options.authorization) headers.authorization = options.authorization;
    let answered = false;
    const req = request(url, { method: 'POST', headers, agent: false }, (res) => {
      answered = true;
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (e) => (answered ? undefined : reject(e)));
    const chunk = Buffer.alloc(64 * 1024, 32);
    let sent = 0;
    const write = () => {
      while (!answered && sent < options.bytes) {
        const piece = sent + chunk.length > options.bytes ? chunk.subarray(0, options.bytes - sent) : chunk;
        sent += piece.length;
        if (!req.write(piece)) return void req.once('drain', write);
      }
      if (!answered) req.end();
    };
    write();
  });
}

export interface Cost {
  statuses: number[];
  /** Peak RSS during the requests above the RSS before them, in bytes. */
  extraBytes: number;
}

/** What `count` concurrent bodies cost the serving process. */
export async function memoryCost(served: ServingProcess, options: BodyOptions, count = 1): Promise<Cost> {
  const before = statusKb(served.pid, 'VmRSS');
  const reset = resetPeak(served.pid);
  const peakBefore = statusKb(served.pid, 'VmHWM');
  const statuses = await Promise.all(Array.from({ length: count }, () => sendBody(served.url, options)));
  await new Promise((r) => setTimeout(r, 100));
  const peak = statusKb(served.pid, 'VmHWM');
  // Without a reset, an earlier peak may hide this one: count only what rose above both.
  const extraKb = reset ? peak - before : Math.max(0, peak - Math.max(before, peakBefore));
  return { statuses, extraBytes: extraKb * 1024 };
}
