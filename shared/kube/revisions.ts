// resourceVersions compared. Kubernetes calls them opaque, but every one it hands out is an etcd
// revision (a decimal that only grows); anything else is "not comparable", and each caller says
// what that means for it (a true-up reads etcd; a reconcile takes the object as written since).

const REVISION = /^[1-9][0-9]{0,19}$/;

export function isRevision(v: string | undefined): v is string {
  return v !== undefined && REVISION.test(v);
}

/** The newer of two revisions (decimals of any length: longer is newer, then by digits). */
export function newerRevision(a: string, b: string): string {
  if (a.length !== b.length) return a.length > b.length ? a : b;
  return a >= b ? a : b;
}

/** The newest revision among `versions`, absent ones skipped; undefined when none is one. */
export function newestRevision(versions: Iterable<string | undefined>): string | undefined {
  let newest: string | undefined;
  for (const v of versions) if (isRevision(v)) newest = newest === undefined ? v : newerRevision(newest, v);
  return newest;
}

/** Whether `resourceVersion` is newer than `since`; not comparable (either is no revision): true, to be safe. */
export function writtenAfter(resourceVersion: string | undefined, since: string): boolean {
  if (!isRevision(resourceVersion) || !isRevision(since)) return true;
  return resourceVersion !== since && newerRevision(resourceVersion, since) === resourceVersion;
}
