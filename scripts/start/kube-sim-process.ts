// kube-sim in a process of its own (`npm run kube-sim`'s entry): `npm start`'s test cluster, so
// that it does not share the stack's heap (and its V8 flags: it holds every object, Furnish does
// not), and the benchmarks' cluster, so that their memory figures for the relay and the reconciler
// are theirs alone.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface KubeSimProcess {
  kubeconfigPath: string;
  server: string;
  adminContext: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts kube-sim with `args` (main.ts's: --dir, --user, ...) and waits until it prints where it
 * is. `ownGroup`: out of this terminal's process group, so that Ctrl-C reaches only this process,
 * which stops the cluster itself, last (`npm start` unregisters its webhooks from it first).
 */
export async function startKubeSimProcess(args: string[] = [], opts: { ownGroup?: boolean } = {}): Promise<KubeSimProcess> {
  const main = join(import.meta.dirname, '..', '..', 'test', 'support', 'kube-sim', 'main.ts');
  // Its stdin stays open while this process lives: killed (even with SIGKILL), the pipe closes and
  // kube-sim stops itself (main.ts --exit-with-stdin).
  const child = spawn(process.execPath, ['--max-old-space-size=8192', main, '--exit-with-stdin', ...args], { stdio: ['pipe', 'pipe', 'inherit'], detached: opts.ownGroup ?? false });
  // This process gone, the cluster it started goes too.
  const orphan = () => child.kill('SIGTERM');
  process.once('exit', orphan);
  let out = '';
  const started = await new Promise<{ kubeconfigPath: string; server: string }>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`kube-sim exited with ${code}: ${out}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const kc = /kubeconfig: (\S+)/.exec(out);
      const server = /server: (\S+)/.exec(out);
      if (kc && server) resolve({ kubeconfigPath: kc[1]!, server: server[1]! });
    });
  });
  return {
    ...started,
    adminContext: 'admin',
    pid: child.pid!,
    stop: () => new Promise<void>((resolve) => {
      process.off('exit', orphan);
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
