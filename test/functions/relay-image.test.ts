// What goes into the relay image (infra/relay/image/Dockerfile), run the way the image runs it:
// the esbuild bundle alone in a folder outside the repository, with only the packages its
// package.json names, `node index.js` against a test API server. It must list, watch, answer
// /readyz and stop cleanly on SIGTERM. (No Docker engine here: this is the image minus its base.)
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildFunction } from '../../scripts/build.ts';
import { connect, createKubeClient } from '../../shared/kube/client.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';

const root = join(import.meta.dirname, '..', '..');

/** The image's /app: the bundle, and node_modules holding exactly its declared dependencies. */
async function imageLayout(): Promise<string> {
  const app = mkdtempSync(join(tmpdir(), 'furnish-relay-image-'));
  const built = await buildFunction('watch-relay', join(app, 'build'));
  cpSync(built.dir, join(app, 'app'), { recursive: true });
  const manifest = JSON.parse(readFileSync(join(app, 'app', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  for (const pkg of Object.keys(manifest.dependencies)) {
    mkdirSync(join(app, 'app', 'node_modules', pkg, '..'), { recursive: true });
    symlinkSync(join(root, 'node_modules', pkg), join(app, 'app', 'node_modules', pkg));
  }
  return join(app, 'app');
}

async function until(condition: () => boolean, deadlineMs: number): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

async function readyz(port: number, deadlineMs: number): Promise<number> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const status = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0);
    if (status === 200 || Date.now() > until) return status;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('relay image contents', () => {
  let cluster: TestCluster;
  let relay: ChildProcess | undefined;
  let output = '';

  beforeAll(async () => {
    cluster = await useTestCluster();
    // The relay lists NamespaceTemplates: it is ready only where the CRD is served.
    const kube = createKubeClient(await connect({ kubeconfigPath: cluster.kubeconfigPath }));
    const crd = parse(readFileSync(join(root, 'infra', 'crds', 'namespacetemplates.yaml'), 'utf8')) as { metadata: { name: string } };
    const applied = await kube.call({ method: 'PATCH', path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`, query: { fieldManager: 'furnish-test', force: true }, contentType: 'application/apply-patch+yaml', body: crd });
    expect(applied.status).toBeLessThan(300);
    kube.close();
  });
  afterAll(async () => {
    relay?.kill('SIGKILL');
    await cluster.stop();
  });

  it('starts from the bundle alone, becomes ready, and exits 0 on SIGTERM', async () => {
    const app = await imageLayout();
    // The image's CMD (node flags, then index.js), as its entrypoint `node` receives it.
    const cmd = JSON.parse(/^CMD (\[.*\])$/m.exec(readFileSync(join(root, 'infra', 'relay', 'image', 'Dockerfile'), 'utf8'))![1]!) as string[];
    relay = spawn(process.execPath, cmd, {
      cwd: app,
      env: { PATH: process.env.PATH, KUBECONFIG: cluster.kubeconfigPath, FURNISH_BUS: 'memory', PORT: '0', FURNISH_CLUSTER_ID: 'image-test' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    relay.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    relay.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    const exited = new Promise<number | null>((resolve) => relay!.once('exit', (code) => resolve(code)));

    // PORT 0: a port of the kernel's choosing (a fixed or random one may be taken on a shared
    // machine); the start line, logged once the watches and the billing tap are up, names it.
    await until(() => output.includes('relay started'), 20_000);
    const started = output.split('\n').find((l) => l.includes('"relay started"'));
    const port = (JSON.parse(started!) as { port: number }).port;
    expect(port).toBeGreaterThan(0);
    const status = await readyz(port, 20_000);
    expect(`${status} ${output.slice(-1500)}`).toMatch(/^200 /);
    relay.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(output).toContain('relay stopped');
  });
});
