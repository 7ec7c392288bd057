// Serving functions on loopback: listen and close a server, keep-alive that outlives the clients',
// and one listener routing `/<function>` to the Functions Framework's server of that function.
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';

/**
 * How long an idle keep-alive connection stays open: longer than the clients keep theirs, so that
 * the client always closes first. Go's HTTP transport (kube-apiserver calling the webhooks) keeps
 * an idle connection 90 s; a server closing it sooner (Node's default: 5 s) races the client's next
 * request on it, which then fails with EOF (issue 25, finding 18).
 */
export const IDLE_KEEP_ALIVE_MS = 120_000;

/** Sets a local server's keep-alive (and the headers timeout, which must exceed it) to outlive its clients'. */
export function serverTimeouts<S extends { keepAliveTimeout: number; headersTimeout: number }>(server: S): S {
  server.keepAliveTimeout = IDLE_KEEP_ALIVE_MS;
  server.headersTimeout = IDLE_KEEP_ALIVE_MS + 5_000;
  return server;
}

export async function listen(server: Server, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const a = server.address();
  return typeof a === 'object' && a ? a.port : port;
}

export async function close(server: Server): Promise<void> {
  server.closeAllConnections?.();
  await new Promise<void>((r) => server.close(() => r()));
}

/** One listener routing `/<function>` to the Functions Framework server of that function. */
export async function functionRouter(names: readonly string[]): Promise<RequestListener> {
  const { getTestServer } = await import('@google-cloud/functions-framework/testing');
  const routes = new Map(names.map((n) => [n, getTestServer(n).listeners('request')[0] as RequestListener]));
  return (req: IncomingMessage, res: ServerResponse) => {
    const name = (req.url ?? '/').split('/')[1]?.split('?')[0] ?? '';
    const route = routes.get(name);
    if (!route) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no function ${name}; have ${[...routes.keys()].join(', ')}\n`);
    route(req, res);
  };
}
