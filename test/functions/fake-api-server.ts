// A stand-in for the API calls the webhooks make (SubjectAccessReview, NamespaceTemplate list and
// get), answering RBAC from objects through the offline evaluator. Counts the calls.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeObject } from '../../shared/kube/types.ts';
import { createRbacAuthorizer } from '../../shared/rbac/authorizer.ts';
import type { NamespaceTemplate } from '../../shared/render/types.ts';

export interface FakeApiServer {
  url: string;
  calls: { method: string; path: string; body?: unknown }[];
  setObjects(objects: KubeObject[]): void;
  setTemplates(templates: NamespaceTemplate[]): void;
  close(): Promise<void>;
}

const TEMPLATES = '/apis/furnish.dev/v1alpha1/namespacetemplates';

export async function startFakeApiServer(initialTemplates: NamespaceTemplate[], rbac: KubeObject[] = []): Promise<FakeApiServer> {
  let templates = initialTemplates;
  let authorizer = createRbacAuthorizer(rbac);
  const calls: FakeApiServer['calls'] = [];
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', async () => {
      const body = text ? JSON.parse(text) : undefined;
      calls.push({ method: req.method ?? '', path: req.url ?? '', body });
      res.setHeader('content-type', 'application/json');
      const one = req.url?.startsWith(`${TEMPLATES}/`) ? templates.find((t) => t.metadata.name === decodeURIComponent(req.url!.slice(TEMPLATES.length + 1))) : undefined;
      if (req.url === TEMPLATES) {
        res.end(JSON.stringify({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceTemplateList', items: templates }));
      } else if (one) {
        res.end(JSON.stringify(one));
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
    setTemplates(next) {
      templates = next;
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
