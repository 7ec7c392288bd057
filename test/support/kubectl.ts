// kubectl as a user of the test cluster, asynchronously (kube-sim answers from the test's own process).
import { spawn } from 'node:child_process';

export interface KubectlRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runKubectl(kubeconfigPath: string, context: string, args: string[], input?: string): Promise<KubectlRun> {
  return new Promise((resolve) => {
    const p = spawn('kubectl', ['--kubeconfig', kubeconfigPath, '--context', context, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (status) => resolve({ status, stdout, stderr }));
    p.stdin.end(input);
  });
}

/** The user name the API server knows a context by (`kubectl auth whoami`): a real cluster's users need not be named like its contexts. */
export async function whoAmI(kubeconfigPath: string, context: string): Promise<string> {
  const r = await runKubectl(kubeconfigPath, context, ['auth', 'whoami', '-o', 'json']);
  if (r.status !== 0) throw new Error(`kubectl auth whoami as ${context}: ${r.stderr}`);
  return (JSON.parse(r.stdout) as { status: { userInfo: { username: string } } }).status.userInfo.username;
}
