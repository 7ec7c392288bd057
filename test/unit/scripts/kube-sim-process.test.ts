// The test cluster `npm start` runs in a process of its own ends with npm start, however npm start
// ends: a SIGKILL runs no exit handler, so kube-sim watches the stdin pipe npm start holds open.
import { afterAll, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..', '..');
const started: ChildProcess[] = [];
let clusterPid: number | undefined;

afterAll(() => {
  for (const c of started) c.kill('SIGKILL');
  if (clusterPid !== undefined && alive(clusterPid)) process.kill(clusterPid, 'SIGKILL');
});

function alive(pid: number): boolean {
  try {
    return process.kill(pid, 0);
  } catch {
    return false;
  }
}

it('kube-sim started by npm start stops when npm start is killed with SIGKILL', async () => {
  const script = `import { startKubeSimProcess } from ${JSON.stringify(join(root, 'scripts', 'start', 'kube-sim-process.ts'))};
const k = await startKubeSimProcess();
console.log('cluster ' + k.pid);
setInterval(() => {}, 1000);`;
  const parent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(parent);
  clusterPid = await new Promise<number>((resolve, reject) => {
    let out = '';
    parent.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /cluster (\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    parent.once('exit', (code) => reject(new Error(`the starting process exited with ${code}: ${out}`)));
  });
  expect(alive(clusterPid)).toBe(true);

  parent.kill('SIGKILL');
  const deadline = Date.now() + 15_000;
  while (alive(clusterPid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  expect(alive(clusterPid)).toBe(false);
}, 60_000);
