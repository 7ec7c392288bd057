// A stand-in for the two API calls the webhooks make (SubjectAccessReview, NamespaceTemplate
// list), answering RBAC from objects through the offline evaluator. Counts the calls.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeObject } from '../../shared/kube/types.ts';
import { createRbacAuthorizer } from '../../shared/rbac/authorizer.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';

export interface FakeApiServer {
  url: string;
  calls: { method: string; path: string; body?: unknown }[];
  setObjects(objects: KubeObject[]): void;
  close(): Promise<void>;
}

export async function startFakeApiServer(templates: NamespaceTemplate[], rbac: KubeObject[] = []): Promise<FakeApiServer> {
  let authorizer = createRbacAuthorizer(rbac);
  const calls: FakeApiServer['calls'] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', async () => {
      const body = text ? JSON.parse(text) : undefined;
      calls.push({ method: req.method ?? '', path: req.url ?? '', body });
      res.setHeader('content-type', 'application/json');
      if (req.url === '/apis/furnish.dev/v1alpha1/namespacetemplates') {
        res.end(JSON.stringify({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplateList', items: templates }));
      } else if (req.url === '/apis/authorization.k8s.io/v1/subjectaccessreviews') {
        const { spec } = body;
        const a = spec.resourceAttributes;
        const decision = await authorizer.check({ user: { username: spec.user, groups: spec.groups, uid: spec.uid, extra: spec.extra }, ...a });
        res.writeHead(201).end(JSON.stringify({ ...body, status: { allowed: decision.allowed, reason: decision.reason } }));
      } else {
        res.writeHead(404).end('{"kind":"Status","code":404,"message":"not found"}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    setObjects(objects) {
      authorizer = createRbacAuthorizer(objects);
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const rbac = 'rbac.authorization.k8s.io/v1';

/** RBAC objects granting `verb` on `resource` (optionally one name) to a user. */
export function grant(user: string, verb: string, group: string, resource: string, name?: string): KubeObject[] {
  const id = `${user}-${verb}-${resource}-${name ?? 'all'}`.replace(/[^a-z0-9-]/g, '-');
  return [
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: id }, rules: [{ apiGroups: [group], resources: [resource], verbs: [verb], ...(name ? { resourceNames: [name] } : {}) }] },
    { apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: { name: id }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: id }, subjects: [{ kind: 'User', name: user }] },
  ];
}
