// The test cluster `npm start` runs in a process of its own ends with npm start, however npm start
// ends: a SIGKILL runs no exit handler, so kube-sim watches the stdin pipe npm start holds open. And
// the webhooks' watchdog, which outlives npm start to remove its registrations, knows that cluster
// is gone with them and ends too, instead of retrying for minutes against a closed port.
import { afterAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..', '..');
const started: ChildProcess[] = [];
let pids: number[] = [];

afterAll(() => {
  for (const c of started) c.kill('SIGKILL');
  for (const pid of pids.filter(alive)) process.kill(pid, 'SIGKILL');
});

function alive(pid: number): boolean {
  try {
    return process.kill(pid, 0);
  } catch {
    return false;
  }
}

it('kube-sim started by npm start, and the webhooks\' watchdog, stop when npm start is killed with SIGKILL', async () => {
  const module = (file: string) => JSON.stringify(join(root, 'scripts', 'start', file));
  const script = `import { startKubeSimProcess } from ${module('kube-sim-process.ts')};
import { startRegistrationWatchdog } from ${module('watchdog.ts')};
const k = await startKubeSimProcess();
const w = await startRegistrationWatchdog({ kubeconfigPath: k.kubeconfigPath, context: 'admin' }, { log() {} }, { clusterPid: k.pid });
console.log('pids ' + k.pid + ' ' + w.pid);
setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  started.push(parent);
  let stderr = '';
  parent.stderr!.on('data', (d: Buffer) => void (stderr += d.toString()));
  pids = await new Promise<number[]>((resolve, reject) => {
    let out = '';
    parent.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /pids (\d+) (\d+)/.exec(out);
      if (m) resolve([Number(m[1]), Number(m[2])]);
    });
    parent.once('exit', (code) => reject(new Error(`the starting process exited with ${code}: ${out}${stderr}`)));
  });
  expect(pids.every(alive)).toBe(true);

  parent.kill('SIGKILL');
  // The watchdog's second sweep comes SETTLE_MS (3 s) after the first; without the cluster's pid it would retry for 5 minutes.
  const deadline = Date.now() + 15_000;
  while (pids.some(alive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(pids.filter(alive)).toEqual([]);
  expect(stderr).not.toContain('"severity":"ERROR"');
}, 60_000);
