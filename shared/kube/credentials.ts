// Where the reconcilers' credentials for a cluster come from: the configured source for that
// cluster (its API server reached with the function's Google identity on GKE, a kubeconfig file
// and context, or a kubeconfig held in Secret Manager), else the local kubeconfig (KUBECONFIG or
// ~/.kube/config) or the in-cluster service account.
import type { ClusterCredentialSource } from '../config/types.ts';
import type { Credentials } from './client.ts';

/** Reads one Secret Manager version; injected so that tests and the local stack need no cloud. */
export type SecretReader = (version: string) => Promise<string>;

/** Secret Manager over REST with google-auth-library (a direct dependency, pinned to the version @google-cloud/pubsub brings). */
export const readSecretManager: SecretReader = async (version) => {
  const { GoogleAuth } = await import('google-auth-library');
  const auth = new GoogleAuth({ scopes: ['https://www.googleapis.com/auth/cloud-platform'] });
  const client = await auth.getClient();
  const res = await client.request<{ payload?: { data?: string } }>({ url: `https://secretmanager.googleapis.com/v1/${version}:access` });
  const data = res.data.payload?.data;
  if (!data) throw new Error(`secret ${version} is empty`);
  return Buffer.from(data, 'base64').toString('utf8');
};

export async function credentialsFor(cluster: string, sources: Record<string, ClusterCredentialSource>, readSecret: SecretReader = readSecretManager): Promise<Credentials> {
  const source = sources[cluster];
  if (!source) return {};
  if (source.google) return { google: source.google };
  if (source.secret) return { kubeconfigYaml: await readSecret(source.secret), context: source.context };
  return { kubeconfigPath: source.kubeconfigPath, context: source.context };
}
