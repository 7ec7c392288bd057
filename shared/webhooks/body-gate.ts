// Runs before the functions framework sees a request: Node publishes every incoming request on
// the diagnostics channel `http.server.request.start` synchronously, before the server's 'request'
// event, where the framework's body parsers run. For the servers that serve a webhook, the gate
// holds the body (body.ts), so the credential is checked from the request line and headers first
// and the body is read only for an authenticated caller, within the limit.
//
// Which servers: in a deployed function (or `functions-framework --target`) the process serves
// exactly one function, and `FUNCTION_TARGET` names it: every server is gated. In a process that
// serves several things (tests, `npm start`), only servers handed to `gateServer`.
import { subscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import { isWebhookName } from '../config/types.ts';
import { holdBody } from './body.ts';

const servers = new WeakSet<object>();
let everyServer = false;
let subscribed = false;

function onRequestStart(message: unknown): void {
  const { request, server } = message as { request: IncomingMessage; server: object };
  if (everyServer || servers.has(server)) holdBody(request);
}

function subscribeOnce(): void {
  if (subscribed) return;
  subscribe('http.server.request.start', onRequestStart);
  subscribed = true;
}

/** Gates one server (one that serves a webhook function, possibly among other routes of the same server). */
export function gateServer<S extends Server | HttpsServer>(server: S): S {
  subscribeOnce();
  servers.add(server);
  return server;
}

/** In a process dedicated to one webhook function (FUNCTION_TARGET names it), gates every server. */
export function gateDedicatedProcess(env: Record<string, string | undefined>): boolean {
  const target = env.FUNCTION_TARGET;
  if (!target || !isWebhookName(target)) return false;
  subscribeOnce();
  everyServer = true;
  return true;
}
