// Webhook token authentication, as kube-apiserver's --authentication-token-webhook-config-file
// (v1): a bearer token no other authenticator knows is sent in a TokenReview to the HTTPS server
// the kubeconfig-format file names (its CA from the file); an authenticated answer is remembered
// for two minutes (--authentication-token-webhook-cache-ttl's default), a refusal is not.
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { parse } from 'yaml';

export interface ReviewedUser {
  username: string;
  uid?: string;
  groups: string[];
}

const CACHE_TTL_MS = 120_000;

interface ConfigFile {
  clusters?: { cluster?: { server?: string; 'certificate-authority-data'?: string } }[];
}

export class TokenWebhook {
  private readonly url: URL;
  private readonly ca: string | undefined;
  private readonly cache = new Map<string, { user: ReviewedUser; until: number }>();

  private constructor(url: URL, ca: string | undefined) {
    this.url = url;
    this.ca = ca;
  }

  static load(configFile: string): TokenWebhook {
    const doc = parse(readFileSync(configFile, 'utf8')) as ConfigFile;
    const cluster = doc.clusters?.[0]?.cluster;
    if (!cluster?.server) throw new Error(`${configFile}: clusters[0].cluster.server is missing`);
    const ca = cluster['certificate-authority-data'];
    return new TokenWebhook(new URL(cluster.server), ca === undefined ? undefined : Buffer.from(ca, 'base64').toString('utf8'));
  }

  /** The user the webhook names for this token, or undefined when it does not authenticate it (or cannot be reached). */
  async review(token: string): Promise<ReviewedUser | undefined> {
    const hit = this.cache.get(token);
    if (hit && Date.now() < hit.until) return hit.user;
    const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } });
    const answer = await new Promise<string | undefined>((resolve) => {
      const req = request(this.url, { method: 'POST', ca: this.ca, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }, timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(res.statusCode === 200 ? Buffer.concat(chunks).toString('utf8') : undefined));
        res.on('error', () => resolve(undefined));
      });
      req.on('error', () => resolve(undefined));
      req.on('timeout', () => req.destroy());
      req.end(body);
    });
    if (answer === undefined) return undefined;
    const status = (JSON.parse(answer) as { status?: { authenticated?: boolean; user?: { username?: string; uid?: string; groups?: string[] } } }).status;
    if (status?.authenticated !== true || !status.user?.username) return undefined;
    const user: ReviewedUser = { username: status.user.username, ...(status.user.uid ? { uid: status.user.uid } : {}), groups: status.user.groups ?? [] };
    this.cache.set(token, { user, until: Date.now() + CACHE_TTL_MS });
    return user;
  }
}
