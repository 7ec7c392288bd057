// `npm run test:cluster [-- jest args, or the suites to run]`: every suite that takes a cluster (test/integration,
// test/e2e, and the suites elsewhere that use the test-cluster helper: kube-sim's fidelity tests,
// the relay image) against the real cluster named by FURNISH_TEST_KUBECONFIG (kind, minikube, or the
// control plane `.ci/run` starts). Without it those suites would quietly run on kube-sim, which is
// what `npm test` already does, so this refuses to start.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const kubeconfig = process.env.FURNISH_TEST_KUBECONFIG;
if (!kubeconfig || !existsSync(kubeconfig)) {
  console.error(`test:cluster needs FURNISH_TEST_KUBECONFIG naming a kubeconfig file (got ${JSON.stringify(kubeconfig ?? '')}); `
    + 'its contexts admin, alice, bob and mallory are the users the suites act as');
  process.exit(2);
}
const root = join(import.meta.dirname, '..');

/** Test files outside test/integration and test/e2e that take a cluster: they import test/support/cluster.ts. */
function otherClusterSuites(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.test.ts') && !/^(integration|e2e)\//.test(f))
    .filter((f) => readFileSync(join(root, dir, f), 'utf8').includes("support/cluster.ts'"))
    .map((f) => join(dir, f))
    .sort();
}

// `npm run test:cluster -- test/e2e/install.test.ts` runs that suite alone; without a path, every suite.
const args = process.argv.slice(2);
const suites = args.some((a) => !a.startsWith('-') && existsSync(join(root, a))) ? [] : ['test/integration', 'test/e2e', ...otherClusterSuites('test')];
// One file at a time: the suites share one cluster, and each waits on reconcilers it starts.
const run = spawnSync(process.execPath, [
  '--experimental-vm-modules', '--no-warnings=ExperimentalWarning', join(root, 'node_modules', 'jest', 'bin', 'jest.js'),
  '--runInBand', ...suites, ...args,
], { stdio: 'inherit', cwd: root });
process.exit(run.status ?? 1);
