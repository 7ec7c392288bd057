// The cluster side of `npm start`: is a cluster there (and what to say when not), Furnish's own
// namespace and CRDs installed, as the kubeconfig's user, before anything else.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { connect, createKubeClient, type KubeClient } from '../../shared/kube/client.ts';
import { KEY } from '../../shared/keys.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import type { Logger } from '../../shared/log.ts';
import { contentHash } from '../../shared/render/index.ts';

export const ROOT = join(import.meta.dirname, '..', '..');

export class NoClusterError extends Error {}

/** Says whether a cluster answers, and how to get one if not. */
export async function probeCluster(kubeconfigPath?: string, context?: string, userAgent?: string): Promise<KubeClient> {
  let kube: KubeClient;
  try {
    kube = createKubeClient(await connect({ kubeconfigPath, context }), { retry: { attempts: 1, baseMs: 0, maxMs: 0, factor: 1, jitter: 0 }, timeoutMs: 3000, ...(userAgent ? { userAgent } : {}) });
  } catch (e) {
    throw new NoClusterError(noClusterMessage(`no usable kubeconfig (${(e as Error).message})`), { cause: e });
  }
  const res = await kube.call({ method: 'GET', path: '/version' });
  if (res.status === 0 || res.status >= 500) {
    kube.close();
    throw new NoClusterError(noClusterMessage(`nothing answers at ${kube.server} (${res.error ?? `HTTP ${res.status}`})`));
  }
  return kube;
}

function noClusterMessage(why: string): string {
  return [
    `No Kubernetes cluster is reachable: ${why}.`,
    'KUBECONFIG names this cluster, so npm start does not start its own test cluster in its place.',
    'Start that cluster, or select a reachable one with `kubectl config use-context <name>`, or unset',
    'KUBECONFIG to let npm start run the project\'s test cluster (kube-sim) itself; then run `npm start` again.',
  ].join('\n');
}

/**
 * Creates Furnish's own namespace (infra/namespace.yaml) before any webhook is registered, so that
 * nobody else can claim it first: the webhooks exempt it by its name.
 */
export async function ensureFurnishNamespace(kube: KubeClient, log: Logger): Promise<void> {
  const ns = parseAllDocuments(readFileSync(join(ROOT, 'infra/namespace.yaml'), 'utf8'))[0]!.toJS() as KubeObject;
  const res = await kube.call({ method: 'PATCH', path: `/api/v1/namespaces/${ns.metadata.name}`, query: { fieldManager: 'furnish', force: true }, contentType: 'application/apply-patch+yaml', body: ns });
  log.log(res.ok ? 'INFO' : 'ERROR', res.ok ? 'Furnish namespace ready' : 'could not create the Furnish namespace', { name: ns.metadata.name, status: res.status, error: res.error });
}

const CRD_FILES = {
  namespacetemplates: 'infra/crds/namespacetemplates.yaml',
  organizations: 'infra/crds/organizations.yaml',
  namespaceinitializationconfigurations: 'infra/crds/namespaceinitializationconfigurations.yaml',
  lnamespaces: 'infra/crds/lnamespaces.yaml',
};

/**
 * Installs each of Furnish's CRDs that the cluster does not serve in this version (absent, or
 * installed by an older checkout: its content hash annotation differs); otherwise writes nothing.
 */
export async function ensureCrd(kube: KubeClient, log: Logger): Promise<void> {
  const docs = Object.values(CRD_FILES).flatMap((file) => parseAllDocuments(readFileSync(join(ROOT, file), 'utf8')).map((d) => d.toJS() as KubeObject));
  for (const crd of docs) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    const hash = contentHash(crd).slice(0, 32);
    const served = await kube.call<KubeObject>({ method: 'GET', path });
    if (served.ok && served.data?.metadata.annotations?.[KEY.appliedHash] === hash) continue;
    const body = { ...crd, metadata: { ...crd.metadata, annotations: { ...crd.metadata.annotations, [KEY.appliedHash]: hash } } };
    const res = await kube.call({ method: 'PATCH', path, query: { fieldManager: 'furnish', force: true }, contentType: 'application/apply-patch+yaml', body });
    log.log(res.ok ? 'INFO' : 'ERROR', res.ok ? 'installed CRD' : 'could not install CRD', { name: crd.metadata.name, status: res.status, error: res.error });
  }
  // Served, and listed: kube-apiserver 1.31+ names a new CRD in discovery while lists of it still
  // answer 429 "storage is (re)initializing" (its watch cache is filling), which the webhooks and
  // reconcilers started next would meet. A plain list, as theirs: a limited one skips the cache.
  const lists = async (plural: string) => (await kube.call({ method: 'GET', path: `/apis/furnish.dev/v1alpha1/${plural}` })).ok;
  const servedAll = async () => {
    const r = await kube.call<{ resources?: Array<{ name: string }> }>({ method: 'GET', path: '/apis/furnish.dev/v1alpha1' });
    const names = new Set((r.data?.resources ?? []).map((x) => x.name));
    if (!r.ok || !Object.keys(CRD_FILES).every((plural) => names.has(plural))) return false;
    for (const plural of Object.keys(CRD_FILES)) if (!(await lists(plural))) return false;
    return true;
  };
  for (let i = 0; i < 100 && !(await servedAll()); i++) await new Promise((r) => setTimeout(r, 100));
}
