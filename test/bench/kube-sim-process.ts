// kube-sim in a process of its own (`npm run kube-sim`'s entry), so that the benchmark's memory
// figures for the relay and the reconciler are theirs alone.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface KubeSimProcess {
  kubeconfigPath: string;
  server: string;
  adminContext: string;
  stop(): Promise<void>;
}

export async function startKubeSimProcess(args: string[] = []): Promise<KubeSimProcess> {
  const main = join(import.meta.dirname, '..', 'support', 'kube-sim', 'main.ts');
  const child = spawn(process.execPath, ['--max-old-space-size=8192', main, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
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
    stop: () => new Promise<void>((resolve) => {
      if (child.exitCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    }),
  };
}
