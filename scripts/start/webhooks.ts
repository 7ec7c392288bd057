// The admission webhooks of `npm start`: each built by its factory from the stack's settings,
// served over HTTPS on loopback with a certificate made for 127.0.0.1, and registered in the cluster
// as `furnish install` registers them: on a server with in-tree policies, Furnish's policies first
// (rendered from the same settings) and the registrations with their matchConditions.
import { readSetting } from '../../shared/config/settings.ts';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as functions from '@google-cloud/functions-framework';
import { SignJWT } from 'jose';
import { loadConfig } from '../../shared/config/load.ts';
import { WEBHOOKS, type PolicySettings, type WebhookName } from '../../shared/config/types.ts';
import { ENFORCEMENT_CHECK, installedPolicies } from '../../shared/install/policies.ts';
import { inTreePolicies } from '../../shared/kube/features.ts';
import type { KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { Logger } from '../../shared/log.ts';
import { webhookRegistration } from '../../shared/webhooks/registration.ts';
import { webhookFunction } from '../../shared/webhooks/serve.ts';
import { KEY } from '../../shared/keys.ts';
import { ENFORCEMENT_WAIT_MS, enforcementProblem } from '../../shared/install/install.ts';
import { LOCAL_FIELD_MANAGER, removeRunCommand, removeRunRegistrations, writeRunAdmission } from '../local-registrations.ts';
import { close, functionRouter, listen, serverTimeouts } from './http.ts';
import type { Identities } from './identities.ts';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * The webhooks' settings: the stack's, plus what this local endpoint decides (cluster id, token
 * secret, public URL) and the API server with the token of the webhooks' own ServiceAccount
 * (SubjectAccessReviews, templates, organizations and their quota ledger are asked as
 * furnish-webhook). The reconciler and the trusted creators are the deployed defaults. A plain
 * object handed to the factories: the process environment is left alone.
 */
function webhookSettings(env: Env, local: { identities: Identities; secret: string; publicUrl: string }): Env {
  const { identities } = local;
  return {
    ...env,
    FURNISH_CLUSTER_ID: readSetting(env, 'clusterId'),
    FURNISH_JWT_SECRET: local.secret,
    FURNISH_PUBLIC_URL: local.publicUrl,
    FURNISH_API_SERVER: identities.server,
    FURNISH_API_TOKEN: identities.webhook.token(),
    ...(identities.caPem ? { FURNISH_API_CA: identities.caPem } : {}),
  };
}

/** The policy settings the webhook functions read from these settings (their cluster's entry). */
async function policySettings(settings: Env): Promise<PolicySettings> {
  const config = await loadConfig({ ...settings });
  const id = readSetting(settings, 'clusterId');
  return config.clusters.find((c) => c.id === id) ?? config.clusters[0]!;
}

interface Webhooks {
  server: Server;
  /** https://127.0.0.1:PORT (the registrations add the path secret). */
  url: string;
  /** The server enforces in-tree policies: Furnish's were written, and the registrations carry matchConditions. */
  readonly inTree: boolean;
  /** Writes the policies and registrations (again). */
  register(): Promise<void>;
  /** Removes the registrations; whether every one is gone. */
  unregister(): Promise<boolean>;
  /** Unregisters and stops serving; whether every registration is gone. */
  stop(): Promise<boolean>;
}

/**
 * Serves the webhook functions over HTTPS with a certificate made for 127.0.0.1 and registers them.
 * kube-apiserver cannot be told to send a bearer token to a URL webhook without its own admission
 * configuration, so locally the URL carries a random path secret and this shim turns it into the
 * webhook JWT (HS256, local secret). Local only: the cloud deployment verifies the real token.
 * `kube` is the installing admin's client: it only registers and unregisters the configurations,
 * each labelled with `runId`, whose watchdog removes them should this process be killed (watchdog.ts).
 */
export async function serveWebhooks(kube: KubeClient, identities: Identities, port: number, env: Env, log: Logger, runId: string, variant: { inTreePolicies?: boolean } = {}): Promise<Webhooks | null> {
  const dir = mkdtempSync(join(tmpdir(), 'furnish-start-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', '/CN=furnish-local', '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'ignore' });
  } catch (e) {
    log.log('WARNING', 'openssl is not available: webhooks not served', { error: (e as Error).message });
    return null;
  }
  const key = readFileSync(join(dir, 'key.pem'));
  const cert = readFileSync(join(dir, 'cert.pem'));
  rmSync(dir, { recursive: true, force: true });
  const secret = randomBytes(32).toString('hex');
  const pathSecret = randomBytes(16).toString('hex');
  const server = serverTimeouts(createHttpsServer({ key, cert }));
  const actualPort = await listen(server, port);
  const publicUrl = `https://127.0.0.1:${actualPort}`;
  /** Each webhook function registered with the webhooks' current token; the names that loaded. */
  const load = async (): Promise<WebhookName[]> => {
    const settings = webhookSettings(env, { identities, secret, publicUrl });
    const names: WebhookName[] = [];
    for (const name of WEBHOOKS) {
      try {
        functions.http(name, await webhookFunction(name, settings));
        names.push(name);
      } catch (e) {
        log.log('WARNING', 'webhook function did not load', { webhook: name, error: (e as Error).message });
      }
    }
    return names;
  };
  const loaded = await load();
  if (loaded.length === 0) {
    await close(server);
    return null;
  }
  let router = await functionRouter(loaded);
  // The functions hold their token as a value (as a deployed one its secret): built again with each new token.
  identities.onRenew(() => void load().then(async (names) => {
    router = await functionRouter(names);
  }).catch((e: unknown) => log.log('ERROR', 'could not give the webhooks their new token', { error: (e as Error).message })));
  const key256 = new TextEncoder().encode(secret);
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const [path = '', query] = (req.url ?? '').split('?');
    const [, given, name, ...rest] = path.split('/');
    if (given !== pathSecret || !name) return void res.writeHead(404).end();
    void new SignJWT({}).setProtectedHeader({ alg: 'HS256' }).setSubject(readSetting(env, 'clusterId')).setAudience(`${publicUrl}/${name}`).setIssuedAt().setExpirationTime('5m').sign(key256).then((jwt) => {
      req.headers.authorization = `Bearer ${jwt}`;
      req.url = `/${[name, ...rest].join('/')}${query === undefined ? '' : `?${query}`}`;
      router(req, res);
    });
  });
  // The webhook engineer's configurations (infra/webhooks), rendered for this local endpoint and
  // this server (with in-tree policies: matchConditions, and Furnish's policies written first).
  let inTree = variant.inTreePolicies !== false && await inTreePolicies(kube);
  const policy = inTree ? await policySettings(webhookSettings(env, { identities, secret, publicUrl })) : undefined;
  const ours = (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata.labels, [KEY.localRun]: runId } } });
  const rendered = (settings: PolicySettings | undefined) => [
    ...(settings ? installedPolicies(settings) : []),
    ...loaded.map((name) => webhookRegistration(name, { functionsUrl: `${publicUrl}/${pathSecret}`, caBundle: cert.toString('base64'), ...(settings ? { inTree: settings } : {}) }) as unknown as KubeObject),
  ].map(ours);
  let configs = rendered(policy);
  // Discovery lists the policies even where the server does not evaluate them: a dry run proves it
  // does; and after their removal, that it no longer does (the server drops them within a second).
  let checks = 0;
  // A name of its own each time: the last check's namespace may still be terminating.
  const enforcement = (lifted: boolean) => enforcementProblem(kube, `start-check-${runId}-${++checks}`, { fieldManager: LOCAL_FIELD_MANAGER, until: Date.now() + ENFORCEMENT_WAIT_MS, lifted });
  const enforced = () => enforcement(false);
  // Policies not written or not in force: the webhook-only variant, as on a server without them (every
  // rule the webhooks', mutate-namespace failing closed), rather than registrations that fail open
  // with nothing behind them; the stack says so (inTreePolicies false) and suites that need the
  // in-tree rules fail on it.
  const register = async () => {
    const problem = await writeRunAdmission(kube, configs, log, enforced);
    if (problem === undefined) return;
    log.log('WARNING', 'in-tree policies not in force: registering the webhooks as on a server without them (webhook-only, mutate-namespace failing closed)', { problem });
    inTree = false;
    configs = rendered(undefined);
    await removeRunRegistrations(kube, runId);
    await writeRunAdmission(kube, configs, log, enforced);
  };
  // A webhook pointing at a server that does not answer would block namespace writes. Only this
  // run's, as the watchdog removes them: another run's, or an install's since, are left alone.
  const unregister = async () => {
    try {
      const removed = await removeRunRegistrations(kube, runId);
      // Unregistered means no longer enforced: whoever writes next (a suite, the user) is not refused by this run.
      const problem = removed.includes(ENFORCEMENT_CHECK.policy) ? await enforcement(true) : undefined;
      if (problem !== undefined) log.log('WARNING', 'this run\'s policies are removed, but the server was not seen to stop enforcing them', { problem });
      return true;
    } catch (e) {
      log.log('WARNING', 'could not remove this run\'s webhook registrations', { error: (e as Error).message, byHand: removeRunCommand(runId) });
      return false;
    }
  };
  await register();
  // Registered over any left by an earlier run (same names). Killed, this run's watchdog removes
  // them; should the machine stop with it (reboot, power loss), the next start does, or this command.
  log.log('INFO', `webhooks served; should this machine stop before npm start does, remove their registrations with: ${removeRunCommand(runId)}`, { url: publicUrl, webhooks: loaded, runId, inTreePolicies: inTree });
  return {
    server,
    url: publicUrl,
    get inTree() {
      return inTree;
    },
    register,
    unregister,
    async stop() {
      const removed = await unregister();
      await close(server);
      return removed;
    },
  };
}
