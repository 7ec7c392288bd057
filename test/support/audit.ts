// A real API server's audit log as a witness of writes (`--audit-log-path`, see .ci/run): every
// request that changed something, whoever sent it, as the server recorded it. `.ci/run` starts the
// control plane with one and names it in FURNISH_TEST_AUDIT_LOG.
import { closeSync, openSync, readSync, statSync } from 'node:fs';

export interface AuditEntry {
  verb: string;
  /** Who sent it, as the server authenticated them. */
  user: string;
  requestURI: string;
  userAgent: string;
  code: number;
  resource: string;
  namespace: string;
  name: string;
}

interface RawEvent {
  stage?: string;
  verb?: string;
  requestURI?: string;
  userAgent?: string;
  user?: { username?: string };
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

/** One audit event line as a write, or null (another stage, a read, a dry run, not JSON). */
export function auditWrite(line: string): AuditEntry | null {
  const e = auditRequest(line);
  return e && WRITE_VERBS.has(e.verb) && !/[?&]dryRun=/.test(e.requestURI) ? e : null;
}

/** One audit event line as a request of any verb (reads are logged when the policy asks), or null (another stage, not JSON). */
export function auditRequest(line: string): AuditEntry | null {
  let e: RawEvent;
  try {
    e = JSON.parse(line) as RawEvent;
  } catch {
    return null;
  }
  if (e.stage !== 'ResponseComplete' || !e.verb) return null;
  const ref = e.objectRef ?? {};
  return {
    verb: e.verb,
    user: e.user?.username ?? '',
    requestURI: e.requestURI ?? '',
    userAgent: e.userAgent ?? '',
    code: e.responseStatus?.code ?? 0,
    resource: ref.subresource ? `${ref.resource}/${ref.subresource}` : (ref.resource ?? ''),
    namespace: ref.namespace ?? '',
    name: ref.name ?? '',
  };
}

export interface AuditLog {
  /** Remembers where the log ends now: `since()` reads what comes after. */
  mark(): void;
  /** Writes recorded since the last mark whose User-Agent passes `who`. */
  since(who?: (userAgent: string) => boolean): AuditEntry[];
  /** Every request recorded since the last mark, reads included (those the audit policy logs). */
  requestsSince(): AuditEntry[];
}

export function auditLog(path: string): AuditLog {
  let offset = 0;
  const linesSinceMark = (): string[] => {
    const size = statSync(path).size;
    if (size <= offset) return [];
    const buf = Buffer.alloc(size - offset);
    const fd = openSync(path, 'r');
    try {
      readSync(fd, buf, 0, buf.length, offset);
    } finally {
      closeSync(fd);
    }
    return buf.toString('utf8').split('\n');
  };
  return {
    mark() {
      offset = statSync(path).size;
    },
    since(who = () => true) {
      return linesSinceMark().map(auditWrite).filter((w): w is AuditEntry => w !== null && who(w.userAgent));
    },
    requestsSince() {
      return linesSinceMark().map(auditRequest).filter((r): r is AuditEntry => r !== null);
    },
  };
}

/** The audit log of the real cluster under test, when .ci/run (or the user) names one. */
export function testAuditLog(): AuditLog | undefined {
  const path = process.env.FURNISH_TEST_AUDIT_LOG;
  return path && process.env.FURNISH_TEST_KUBECONFIG ? auditLog(path) : undefined;
}
