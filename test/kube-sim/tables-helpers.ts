// Shared by the Table suites: kubectl's Accept header, Furnish's CRDs, the captured tables.
import { join } from 'node:path';
import { runKubectl } from '../support/kubectl.ts';
import { fixture } from './helpers.ts';

/** What `kubectl get` sends. */
export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';

const CRDS = ['lnamespaces', 'namespaceinitializationconfigurations', 'namespacetemplates', 'organizations']
  .map((name) => join(import.meta.dirname, '..', '..', 'infra', 'crds', `${name}.yaml`));

/** Installs (or keeps) Furnish's CRDs as admin and waits until their kinds are served. */
export async function applyCrds(kubeconfigPath: string): Promise<void> {
  const applied = await runKubectl(kubeconfigPath, 'admin', ['apply', ...CRDS.flatMap((f) => ['-f', f])]);
  if (applied.status !== 0) throw new Error(`kubectl apply of the CRDs: ${applied.stderr}`);
  const waited = await runKubectl(kubeconfigPath, 'admin', ['wait', '--for=condition=Established', '--timeout=30s',
    ...['lnamespaces', 'namespaceinitializationconfigurations', 'namespacetemplates', 'organizations'].map((p) => `crd/${p}.furnish.dev`)]);
  if (waited.status !== 0) throw new Error(`kubectl wait for the CRDs: ${waited.stderr}`);
}

/** A Table (or Status, or watch stream) captured from kube-apiserver 1.26 (test/fixtures/kube-apiserver-1.26/tables). */
export function tableFixture(name: string): ReturnType<typeof fixture> {
  return fixture(name, 'tables');
}
