// The per-cluster credential carried in a webhook URL's path, for managed control planes (GKE, EKS,
// AKS) where nothing but the URL reaches the webhook call. A URL ends in `/c/<cluster id>/<credential>`:
// unguessable (32+ random characters), compared in constant time against every valid value (two
// during a rotation), and never written to a log or a message.
import { createHash, timingSafeEqual } from 'node:crypto';

/** What a path credential must be: URL-safe, long enough to be unguessable (e.g. `openssl rand -hex 32`). */
export const PATH_CREDENTIAL_PATTERN = /^[A-Za-z0-9_-]{32,256}$/;
export const PATH_CREDENTIAL_RULE = 'must be 32 to 256 characters of A-Z, a-z, 0-9, - and _ (e.g. openssl rand -hex 32)';

/** The path segment that introduces a path credential. */
export const CREDENTIAL_SEGMENT = 'c';

export interface PathCredential {
  cluster: string;
  credential: string;
}

/** The cluster and credential a request path ends with, or undefined when it carries none. */
export function pathCredentialOf(path: string): PathCredential | undefined {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  const at = parts.lastIndexOf(CREDENTIAL_SEGMENT);
  if (at < 0 || at !== parts.length - 3) return undefined;
  return { cluster: decodeSegment(parts[at + 1]!), credential: decodeSegment(parts[at + 2]!) };
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether `given` equals one of `valid`, in time independent of where they differ: equal-length
 * digests are compared with timingSafeEqual, and every valid value is compared (no early exit).
 */
export function credentialMatches(given: string, valid: readonly string[]): boolean {
  const mine = digest(given);
  let matched = false;
  for (const v of valid) matched = timingSafeEqual(mine, digest(v)) || matched;
  return matched;
}

/** The path suffix a cluster's webhooks are registered with: `/c/<cluster>/<credential>`. */
export function credentialPath(cluster: string, credential: string): string {
  return `/${CREDENTIAL_SEGMENT}/${encodeURIComponent(cluster)}/${encodeURIComponent(credential)}`;
}
