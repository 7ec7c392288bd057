// The local stack's servers keep an idle keep-alive connection open longer than their clients do
// (issue 25, finding 18): kube-apiserver's HTTP client (Go) keeps an idle connection to a webhook
// for 90 s, and with Node's default 5 s the server closed it first, so the API server's next call
// on it failed with EOF. A client here holds its connection idle past 5 s and sends again on it:
// the same socket must carry the second request.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http from 'node:http';
import https from 'node:https';
import { startLocalStack, type LocalStack } from '../../scripts/start/stack.ts';
import { silentLogger } from '../../shared/log.ts';
import { useTestCluster, type TestCluster } from '../support/cluster.ts';

let cluster: TestCluster;
let stack: LocalStack;

beforeAll(async () => {
  cluster = await useTestCluster();
  const context = cluster.isSimulated ? cluster.users.admin!.context : undefined;
  stack = await startLocalStack({ kubeconfigPath: cluster.kubeconfigPath, context, port: 0, relayPort: 0, webhookPort: 0, resyncSeconds: 0, log: silentLogger });
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await cluster?.stop();
});

/** GET `url` through `agent`: the status, and whether it went over a socket already used. */
function get(url: string, agent: http.Agent): Promise<{ status: number; reused: boolean }> {
  const client = url.startsWith('https:') ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.get(url, { agent, rejectUnauthorized: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.on('error', reject);
  });
}

/** Longer than Node's default server keep-alive (5 s), which is what gave kube-apiserver its EOFs. */
const IDLE_MS = 6_500;

describe('an idle keep-alive connection outlives Node\'s default 5 s', () => {
  for (const server of ['webhooks', 'reconcilers'] as const) {
    it(`the ${server}' server keeps it: the next request goes over the same socket`, async () => {
      const url = server === 'webhooks' ? stack.webhookUrl! : stack.reconcilerUrl;
      expect(url).toBeDefined();
      const agent = url.startsWith('https:') ? new https.Agent({ keepAlive: true, maxSockets: 1 }) : new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        // Any path: an unknown one is answered (404) without touching the cluster.
        const first = await get(`${url}/no-such-function`, agent);
        expect(first).toEqual({ status: 404, reused: false });
        await new Promise((r) => setTimeout(r, IDLE_MS));
        const second = await get(`${url}/no-such-function`, agent);
        expect(second).toEqual({ status: 404, reused: true });
      } finally {
        agent.destroy();
      }
    }, 20_000);
  }
});
