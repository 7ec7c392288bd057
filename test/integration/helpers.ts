// Shared steps of the population tests: a Kubernetes client on kube-sim as a given user, object
// builders, and polling until the cluster converges.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { KEY } from '../../shared/keys.ts';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';

export async function clientFor(kubeconfigPath: string, context?: string): Promise<KubeClient> {
  return createKubeClient(await connect({ kubeconfigPath, context }), { qps: 1e6, burst: 1e6 });
}

export async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 20_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export function examples(): NamespaceTemplate[] {
  const dir = join(import.meta.dirname, '..', '..', 'examples');
  return ['security-defaults.yaml', 'starter-settings.yaml', 'privileged.yaml'].flatMap((f) =>
    parseAllDocuments(readFileSync(join(dir, f), 'utf8')).map((d) => d.toJS() as NamespaceTemplate).filter((o) => o?.kind === 'NamespaceTemplate'),
  );
}

export async function applyTemplate(kube: KubeClient, t: NamespaceTemplate): Promise<void> {
  const res = await kube.call({ method: 'PATCH', path: `/apis/furnish.dev/v1alpha1/namespacetemplates/${t.metadata.name}`, query: { fieldManager: 'test', force: true }, contentType: 'application/apply-patch+yaml', body: t });
  if (!res.ok) throw new Error(`apply template ${t.metadata.name}: ${res.status} ${res.error}`);
}

export async function deleteTemplate(kube: KubeClient, name: string): Promise<void> {
  await kube.call({ method: 'DELETE', path: `/apis/furnish.dev/v1alpha1/namespacetemplates/${name}` });
}

/** A namespace as mutate-namespace leaves it (creator, phase=pending), created directly. */
export async function createNamespace(kube: KubeClient, name: string, labels: Record<string, string> = {}, annotations: Record<string, string> = {}): Promise<void> {
  const body: KubeObject = { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { [KEY.phase]: 'pending', ...labels }, annotations: { [KEY.creator]: 'alice', ...annotations } } };
  const res = await kube.call({ method: 'POST', path: '/api/v1/namespaces', body });
  if (!res.ok) throw new Error(`create namespace ${name}: ${res.status} ${res.error}`);
}

export async function patchNamespace(kube: KubeClient, name: string, patch: unknown): Promise<void> {
  const res = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${name}`, contentType: 'application/merge-patch+json', body: patch });
  if (!res.ok) throw new Error(`patch namespace ${name}: ${res.status} ${res.error}`);
}

export async function get(kube: KubeClient, path: string): Promise<KubeObject | undefined> {
  const res = await kube.call<KubeObject>({ method: 'GET', path });
  return res.ok ? res.data : undefined;
}

export async function phaseOf(kube: KubeClient, ns: string): Promise<string | undefined> {
  return (await get(kube, `/api/v1/namespaces/${ns}`))?.metadata.labels?.[KEY.phase];
}

export async function waitReady(kube: KubeClient, ns: string, timeoutMs = 20_000): Promise<void> {
  await waitFor(`namespace ${ns} phase=ready`, async () => (await phaseOf(kube, ns)) === 'ready', timeoutMs);
}

export async function list(kube: KubeClient, path: string, labelSelector?: string): Promise<KubeObject[]> {
  const res = await kube.call<{ items: KubeObject[] }>({ method: 'GET', path, query: { labelSelector } });
  if (!res.ok) throw new Error(`list ${path}: ${res.status} ${res.error}`);
  return res.data?.items ?? [];
}

/** The field managers that own an object (from managedFields). */
export function managers(obj: KubeObject | undefined): string[] {
  return ((obj?.metadata.managedFields ?? []) as { manager?: string }[]).map((m) => m.manager ?? '');
}

export const NETPOL = (ns: string, name: string) => `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${name}`;
export const ROLEBINDING = (ns: string, name: string) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/${name}`;
export const CONFIGMAP = (ns: string, name: string) => `/api/v1/namespaces/${ns}/configmaps/${name}`;
export const QUOTA = (ns: string, name: string) => `/api/v1/namespaces/${ns}/resourcequotas/${name}`;
