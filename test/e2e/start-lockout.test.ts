// `npm start` cannot lock a cluster out (docs/adr/0010). Its webhook registrations fail closed, as
// deployed ones do; pointing at this machine, they would refuse every namespace create once its
// servers stop answering. Killed with SIGKILL (the node process alone, or its whole process group),
// just after it wrote its first registration, once it wrote them all, or mid-run while its
// webhooks answer: its watchdog, a process of its own started before any registration, removes
// them. Suspended with Ctrl-Z (SIGTSTP): it removes them before it stops, and writes them again
// when resumed. Either way the admin and a user allowed to create namespaces can create one. npm
// start runs here as npm runs it (package.json's command, a child process) against the test
// cluster: kube-sim, or a real API server. Where the server has in-tree policies, npm start writes
// Furnish's too, and its watchdog removes them with the registrations.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { removeStaleLocalRegistrations } from '../../scripts/local-registrations.ts';
import { KEY } from '../../shared/keys.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import { POLICY_KINDS } from '../../shared/install/policies.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { silentLogger } from '../../shared/log.ts';
import { clientFor } from '../integration/helpers.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';

const root = join(import.meta.dirname, '..', '..');
const run = Math.random().toString(36).slice(2, 7);
const once = { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 };
/** How soon after the kill both creates must succeed. */
const UNLOCKED_WITHIN_MS = 20_000;
const RBAC = '/apis/rbac.authorization.k8s.io/v1';

let cluster: TestCluster;
let admin: KubeClient;
let alice: KubeClient;
let inTree = false;
const children: ChildProcess[] = [];
const namespaces: string[] = [];

/** `npm start`'s command (package.json), run by this Node without npm's wrappers: its pid is the one to kill. */
function npmStart(kubeconfigPath: string): { child: ChildProcess; output: (pattern: RegExp, timeoutMs: number) => Promise<string>; text: () => string } {
  const [node, ...args] = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ');
  expect(node).toBe('node');
  const state = mkdtempSync(join(tmpdir(), 'furnish-killed-'));
  // Its own process group, as a terminal gives `npm start` one.
  const child = spawn(process.execPath, args, {
    cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBECONFIG: kubeconfigPath, FURNISH_STATE_DIR: state, FURNISH_START_PORT: '0', FURNISH_RELAY_PORT: '0', FURNISH_WEBHOOK_PORT: '0' },
  });
  children.push(child);
  let seen = '';
  const waiters: Array<() => void> = [];
  const onData = (d: Buffer) => {
    seen += d.toString();
    for (const w of waiters) w();
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  return {
    child,
    text: () => seen,
    output: (pattern, timeoutMs) => new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`npm start printed no ${pattern} within ${timeoutMs} ms:\n${seen.slice(-3000)}`)), timeoutMs);
      const check = () => {
        if (!pattern.test(seen)) return;
        clearTimeout(timer);
        resolve(seen);
      };
      waiters.push(check);
      check();
    }),
  };
}

/** The JSON log line of `component` whose message contains `message`, once printed. */
function logLine(text: string, component: string, message: string): Record<string, unknown> | undefined {
  return text.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.component === component && String(l.message).includes(message));
}

async function createNamespace(kube: KubeClient, name: string) {
  namespaces.push(name);
  return kube.call<KubeObject>({ method: 'POST', path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }, retry: once });
}

/** Creates `name` as `kube` until it is created (201), or says what the last refusal was. */
async function createWithin(kube: KubeClient, name: string, deadline: number): Promise<number> {
  for (;;) {
    const res = await createNamespace(kube, name);
    if (res.status === 201 || Date.now() > deadline) {
      if (res.status !== 201) throw new Error(`namespace ${name}: still refused ${UNLOCKED_WITHIN_MS} ms after the kill: ${res.status} ${res.error}`);
      return res.status;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Whether a process `pid` exists (signal 0 only checks). */
function alive(pid: number): boolean {
  try { return process.kill(pid, 0); } catch { return false; }
}

beforeAll(async () => {
  cluster = await useTestCluster();
  admin = await clientFor(cluster.kubeconfigPath, 'admin');
  alice = await clientFor(cluster.kubeconfigPath, 'alice');
  inTree = await inTreePolicies(admin);
  // alice may create namespaces, and nothing more.
  await admin.call({ method: 'POST', path: `${RBAC}/clusterroles`, body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: `ns-creator-${run}` }, rules: [{ apiGroups: [''], resources: ['namespaces'], verbs: ['create', 'get'] }] } });
  await admin.call({ method: 'POST', path: `${RBAC}/clusterrolebindings`, body: { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: `alice-ns-${run}` }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `ns-creator-${run}` }, subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }] } });
}, 60_000);

afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  // A shared real cluster must not be left locked, whatever happened above.
  if (admin) await removeStaleLocalRegistrations(admin, silentLogger);
  for (const ns of namespaces) await admin?.call({ method: 'DELETE', path: `/api/v1/namespaces/${ns}`, retry: once });
  await admin?.call({ method: 'DELETE', path: `${RBAC}/clusterrolebindings/alice-ns-${run}`, retry: once });
  await admin?.call({ method: 'DELETE', path: `${RBAC}/clusterroles/ns-creator-${run}`, retry: once });
  admin?.close();
  alice?.close();
  await cluster?.stop();
}, 60_000);

const MOMENTS = [
  { when: 'just after its first webhook registration is written', printed: /"message":"webhook registered"/, kill: 'the node process' },
  { when: 'once every registration is written', printed: /"message":"webhooks served/, kill: 'its process group' },
  { when: 'mid-run, while its webhooks answer', printed: /Furnish is running/, kill: 'the node process' },
  { when: 'mid-run, while its webhooks answer', printed: /Furnish is running/, kill: 'its process group' },
] as const;

describe('npm start killed with SIGKILL leaves namespace creation working for everyone', () => {
  it.each(MOMENTS.map((m, i) => [m.when, m.kill, i] as const))('%s, SIGKILL to %s', async (_when, kill, i) => {
    const { printed } = MOMENTS[i]!;
    const start = npmStart(cluster.kubeconfigPath);
    await start.output(printed, 90_000);
    if (i >= 2) {
      // Its webhooks are live and fail closed: alice's namespace gets her as its creator through them.
      const created = await createNamespace(alice, `killed-${run}-${i}-live`);
      expect(created.status).toBe(201);
      expect(created.data?.metadata.annotations?.[KEY.creator]).toBe('alice');
    }
    const exited = new Promise((resolve) => start.child.once('exit', resolve));
    process.kill(kill === 'its process group' ? -start.child.pid! : start.child.pid!, 'SIGKILL');
    await exited;
    const deadline = Date.now() + UNLOCKED_WITHIN_MS;

    expect(await createWithin(admin, `killed-${run}-${i}-admin`, deadline)).toBe(201);
    expect(await createWithin(alice, `killed-${run}-${i}-alice`, deadline)).toBe(201);

    // The watchdog removed this run's registrations (at least the one written before the kill), and exited.
    const started = logLine(start.text(), 'furnish-local', 'watchdog started');
    const runId = String(started?.runId);
    await start.output(/ended without removing its webhook registrations: removed them/, UNLOCKED_WITHIN_MS);
    const removed = logLine(start.text(), 'furnish-local-watchdog', 'removed them')?.registrations as string[];
    expect(removed.length).toBeGreaterThan(0);
    // The policies, written before any registration, were removed with them.
    if (inTree) expect(removed).toEqual(expect.arrayContaining(['furnish-namespace-marks', 'furnish-guard']));
    for (const plural of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations', ...(inTree ? POLICY_KINDS.map((k) => k.plural) : [])]) {
      const left = await admin.call<{ items: KubeObject[] }>({ method: 'GET', path: `/apis/admissionregistration.k8s.io/v1/${plural}`, query: { labelSelector: `${KEY.localRun}=${runId}` } });
      expect(left.data?.items.map((o) => o.metadata.name)).toEqual([]);
    }
    const gone = Date.now() + UNLOCKED_WITHIN_MS;
    while (alive(started?.pid as number) && Date.now() < gone) await new Promise((r) => setTimeout(r, 200));
    expect(alive(started?.pid as number)).toBe(false);
  }, 150_000);
});

/** `ps`'s state of process `pid` (`T`: stopped). */
const stateOf = (pid: number) => execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();

describe('npm start suspended with Ctrl-Z', () => {
  it('removes its registrations before it stops, and writes them again when it resumes', async () => {
    const start = npmStart(cluster.kubeconfigPath);
    await start.output(/Furnish is running/, 90_000);
    const pid = start.child.pid!;
    // What a terminal sends its foreground process group on Ctrl-Z.
    process.kill(-pid, 'SIGTSTP');
    await start.output(/suspended \(Ctrl-Z\): webhook registrations removed/, 30_000);
    const deadline = Date.now() + UNLOCKED_WITHIN_MS;
    while (!stateOf(pid).startsWith('T') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(stateOf(pid)).toMatch(/^T/);

    expect(await createWithin(admin, `suspended-${run}-admin`, deadline)).toBe(201);
    expect(await createWithin(alice, `suspended-${run}-alice`, deadline)).toBe(201);

    // `fg`: its webhooks are registered again, and answer (alice is recorded as the creator).
    process.kill(-pid, 'SIGCONT');
    await start.output(/resumed: webhooks registered again/, 30_000);
    const created = await createNamespace(alice, `resumed-${run}-alice`);
    expect(created.status).toBe(201);
    expect(created.data?.metadata.annotations?.[KEY.creator]).toBe('alice');

    const exited = new Promise<number | null>((resolve) => start.child.once('exit', (code) => resolve(code)));
    process.kill(pid, 'SIGINT');
    expect(await exited).toBe(0);
  }, 150_000);
});
