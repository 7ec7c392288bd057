// Which cluster `npm start` runs against. A reachable one from the kubeconfig, as kubectl would
// pick it; with none, and no KUBECONFIG naming one on purpose, the project's own test cluster
// (kube-sim) started as a process of its own, so that the first `npm start` on a fresh clone works.
import { join } from 'node:path';

export type ClusterChoice =
  | { kind: 'configured'; kubeconfigPath?: string }
  | { kind: 'embedded' }
  | { kind: 'refuse' };

/**
 * A KUBECONFIG set by the user names the cluster they want: never swap in another one behind their
 * back. Without it, an unreachable default kubeconfig means this machine has no cluster at all.
 */
export function chooseCluster(reachable: boolean, env: Record<string, string | undefined>): ClusterChoice {
  if (reachable) return { kind: 'configured', kubeconfigPath: env.KUBECONFIG?.split(':')[0] };
  if (env.KUBECONFIG) return { kind: 'refuse' };
  return { kind: 'embedded' };
}

export interface EmbeddedCluster {
  kubeconfigPath: string;
  server: string;
  /** Its process. */
  pid: number;
  stop(): Promise<void>;
}

/**
 * The users (and their groups) of every walk-through in the docs, each a context of the kubeconfig:
 * one `npm start` runs them all in sequence. admin is cluster-admin (system:masters); alice and
 * bob share group dev (a Group sudoer's members); carol is in none.
 */
export const WALKTHROUGH_USERS = ['admin', 'alice:dev', 'bob:dev', 'carol'] as const;

/** kube-sim with the walk-throughs' users; its kubeconfig in `<stateDir>/kube-sim/` (`.furnish/`, git-ignored). */
export async function startEmbeddedCluster(stateDir: string): Promise<EmbeddedCluster> {
  const { startKubeSimProcess } = await import('./start/kube-sim-process.ts');
  // Its own process: the stack runs with the functions' heap limit (memory-flags.ts), a cluster holding every object would not fit in it.
  const cluster = await startKubeSimProcess(['--dir', join(stateDir, 'kube-sim'), ...WALKTHROUGH_USERS.flatMap((u) => ['--user', u])], { ownGroup: true });
  return { kubeconfigPath: cluster.kubeconfigPath, server: cluster.server, pid: cluster.pid, stop: () => cluster.stop() };
}

/** What a user reads first when Furnish started its own cluster: where it is and what to type. */
export function embeddedClusterBanner(cluster: Pick<EmbeddedCluster, 'kubeconfigPath' | 'server'>): string {
  return [
    '',
    `No Kubernetes cluster was reachable, so Furnish started its test cluster (kube-sim) at ${cluster.server},`,
    `with users ${WALKTHROUGH_USERS.map((u) => u.split(':')[0]).join(', ')} (kubectl --context <user>). In another terminal:`,
    `    export KUBECONFIG=${cluster.kubeconfigPath}`,
    '    kubectl apply -f examples/',
    '    kubectl create clusterrole ns-creator --verb=create,get,list --resource=namespaces',
    '    kubectl create clusterrolebinding alice-ns --clusterrole=ns-creator --user=alice',
    '    kubectl create clusterrolebinding bob-ns --clusterrole=ns-creator --user=bob',
    '    kubectl --context alice create namespace team-a',
    '    kubectl get namespace team-a -o yaml',
    'It lives as long as this process (Ctrl-C stops both). To use a real cluster instead, set KUBECONFIG or',
    '`kubectl config use-context <name>` and run `npm start` again.',
    '',
  ].join('\n');
}

/** The settings that move each port `npm start` listens on. */
const PORT_SETTINGS: Record<string, string> = { '8080': 'FURNISH_START_PORT', '8081': 'FURNISH_RELAY_PORT', '8443': 'FURNISH_WEBHOOK_PORT' };

/** A busy port, said as what to do about it; undefined for any other failure. */
export function portInUseMessage(error: unknown, env: Record<string, string | undefined>): string | undefined {
  const e = error as { code?: string; port?: number };
  if (e?.code !== 'EADDRINUSE' || e.port === undefined) return undefined;
  const setting = Object.entries(PORT_SETTINGS).find(([port, name]) => Number(env[name] ?? port) === e.port)?.[1];
  const how = setting ? `set ${setting} to a free port (0 lets the system pick one)` : 'choose another port';
  return `Port ${e.port} on 127.0.0.1 is already in use (another npm start?): stop what listens there, or ${how}.`;
}
