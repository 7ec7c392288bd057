// The real Pub/Sub emulator (gcloud beta emulators pubsub, Java) for integration tests, the
// benchmark and `npm start`: started on a free 127.0.0.1 port in its own process group, topics
// and push subscriptions created over its REST API, stopped with the whole group.
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

export interface PubSubEmulator {
  /** host:port, the value of PUBSUB_EMULATOR_HOST. */
  host: string;
  project: string;
  createTopic(name: string): Promise<void>;
  /** A push subscription with message ordering, delivering to `endpoint` (no OIDC: the emulator sends none). */
  createPushSubscription(name: string, topic: string, endpoint: string, opts?: { minBackoffSeconds?: number; maxBackoffSeconds?: number }): Promise<void>;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const a = s.address();
      const port = typeof a === 'object' && a ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

async function rest(host: string, method: string, path: string, body?: unknown): Promise<void> {
  const res = await fetch(`http://${host}/v1/${path}`, { method, headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  if (!res.ok && res.status !== 409) throw new Error(`emulator ${method} ${path}: HTTP ${res.status} ${await res.text()}`);
}

export async function startPubSubEmulator(project = 'furnish-test', timeoutMs = 60_000): Promise<PubSubEmulator> {
  const port = await freePort();
  const host = `127.0.0.1:${port}`;
  const child: ChildProcess = spawn('gcloud', ['beta', 'emulators', 'pubsub', 'start', `--host-port=${host}`, `--project=${project}`], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the Pub/Sub emulator exited (${child.exitCode}):\n${output.slice(-2000)}`);
    try {
      const r = await fetch(`http://${host}/`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      stopGroup(child);
      throw new Error(`the Pub/Sub emulator did not start within ${timeoutMs} ms:\n${output.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    host,
    project,
    createTopic: (name) => rest(host, 'PUT', `projects/${project}/topics/${name}`),
    createPushSubscription: (name, topic, endpoint, opts = {}) =>
      rest(host, 'PUT', `projects/${project}/subscriptions/${name}`, {
        topic: `projects/${project}/topics/${topic}`,
        pushConfig: { pushEndpoint: endpoint },
        enableMessageOrdering: true,
        ackDeadlineSeconds: 60,
        retryPolicy: { minimumBackoff: `${opts.minBackoffSeconds ?? 1}s`, maximumBackoff: `${opts.maxBackoffSeconds ?? 10}s` },
      }),
    async stop() {
      stopGroup(child);
      await new Promise<void>((r) => (child.exitCode !== null ? r() : child.once('exit', () => r())));
    },
  };
}

function stopGroup(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGTERM');
  } catch {
    // already gone
  }
}
