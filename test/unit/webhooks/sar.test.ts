import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createKubeHttp } from '../../../shared/kube/http.ts';
import { accessCheckKey, cachedAuthorizer, createSarAuthorizer, describeAccess, subjectAccessReviewOf } from '../../../shared/kube/sar.ts';
import type { AccessCheck } from '../../../shared/kube/sar.ts';
import { clusterTemplates } from '../../../shared/webhooks/templates.ts';
import { fakeAuthorizer, SCENARIO_TEMPLATES } from '../../support/fixtures.ts';

const bob = { username: 'bob', uid: 'bob-uid', groups: ['dev', 'system:authenticated'], extra: { 'authentication.kubernetes.io/pod-name': ['p'] } };
const useCheck: AccessCheck = { user: bob, verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'privileged' };

describe('describing access', () => {
  it('spells the RBAC a check needs', () => {
    expect(describeAccess(useCheck)).toBe('verb "use" on namespacetemplates.furnish.dev, resourceName "privileged"');
    expect(describeAccess({ verb: 'optout', group: 'furnish.dev', resource: 'namespacetemplates' })).toBe('verb "optout" on namespacetemplates.furnish.dev');
    expect(describeAccess({ verb: 'get', group: '', resource: 'pods', subresource: 'log', namespace: 'a' })).toBe('verb "get" on pods/log in namespace "a"');
  });

  it('builds the SubjectAccessReview with user, groups, uid and extra', () => {
    expect(subjectAccessReviewOf(useCheck)).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        resourceAttributes: { verb: 'use', group: 'furnish.dev', resource: 'namespacetemplates', name: 'privileged' },
        user: 'bob',
        uid: 'bob-uid',
        groups: ['dev', 'system:authenticated'],
        extra: { 'authentication.kubernetes.io/pod-name': ['p'] },
      },
    });
  });
});

describe('the SubjectAccessReview client against an HTTP API server', () => {
  let server: Server;
  let url: string;
  const seen: { path?: string; auth?: string; body: unknown }[] = [];
  let mode: 'allow' | 'deny' | 'fail' | 'slow' = 'allow';

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ path: req.url, auth: req.headers.authorization, body: body ? JSON.parse(body) : undefined });
        if (mode === 'slow') return; // never answers
        if (mode === 'fail') {
          res.writeHead(401, { 'content-type': 'application/json' }).end('{"kind":"Status","message":"Unauthorized","code":401}');
          return;
        }
        if (req.url?.includes('namespacetemplates')) {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ items: SCENARIO_TEMPLATES }));
          return;
        }
        const status = mode === 'allow' ? { allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "bob-tpl"' } : { allowed: false };
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ ...JSON.parse(body), status }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  it('posts the review with the bearer token and reads the answer', async () => {
    mode = 'allow';
    const sar = createSarAuthorizer(createKubeHttp({ server: url, token: 'webhook-token' }));
    expect(await sar.check(useCheck)).toEqual({ allowed: true, reason: 'RBAC: allowed by ClusterRoleBinding "bob-tpl"' });
    expect(seen.at(-1)).toMatchObject({ path: '/apis/authorization.k8s.io/v1/subjectaccessreviews', auth: 'Bearer webhook-token', body: subjectAccessReviewOf(useCheck) });
    mode = 'deny';
    expect(await sar.check(useCheck)).toMatchObject({ allowed: false });
  });

  it('never throws: an error status or a timeout become an error answer', async () => {
    mode = 'fail';
    expect(await createSarAuthorizer(createKubeHttp({ server: url })).check(useCheck)).toEqual({ allowed: false, error: 'SubjectAccessReview failed: Unauthorized' });
    mode = 'slow';
    const started = Date.now();
    const answer = await createSarAuthorizer(createKubeHttp({ server: url, timeoutMs: 100 })).check(useCheck);
    expect(answer.error).toMatch(/within 100 ms/);
    expect(Date.now() - started).toBeLessThan(2000);
    const refused = await createSarAuthorizer(createKubeHttp({ server: 'http://127.0.0.1:1' })).check(useCheck);
    expect(refused.error).toMatch(/ECONNREFUSED/);
  });

  it('reads the NamespaceTemplate list afresh every time (a decision that grants never sees a stale list)', async () => {
    mode = 'allow';
    const before = seen.length;
    const source = clusterTemplates(createKubeHttp({ server: url }));
    expect((await source.list()).map((x) => x.metadata.name)).toEqual(['default', 'privileged']);
    await Promise.all([source.list(), source.list()]);
    expect(seen.length - before).toBe(3);
    expect(source.current).toBeUndefined();
  });
});

describe('cachedAuthorizer', () => {
  it('remembers allowed answers for the TTL, per user and attributes, bounded in size; never denials or errors', async () => {
    let t = 0;
    const inner = fakeAuthorizer([{ user: 'bob', verb: 'use' }]);
    const cached = cachedAuthorizer(inner, { ttlMs: 10_000, maxEntries: 2, now: () => t });
    await cached.check(useCheck);
    await cached.check(structuredClone(useCheck));
    expect(inner.calls).toHaveLength(1);
    await cached.check({ ...useCheck, user: { ...bob, groups: ['other'] } });
    expect(inner.calls).toHaveLength(2);
    t = 10_001;
    await cached.check(useCheck);
    expect(inner.calls).toHaveLength(3);
    const failing = fakeAuthorizer([], 'down');
    const c2 = cachedAuthorizer(failing);
    await c2.check(useCheck);
    await c2.check(useCheck);
    expect(failing.calls).toHaveLength(2);
    expect(accessCheckKey(useCheck)).not.toBe(accessCheckKey({ ...useCheck, name: 'other' }));
    // A denial is asked again every time: a user just granted `use` is allowed at once.
    const denying = fakeAuthorizer([]);
    const c3 = cachedAuthorizer(denying);
    expect((await c3.check(useCheck)).allowed).toBe(false);
    expect(c3.cached?.(useCheck)).toBeUndefined();
    await c3.check(useCheck);
    expect(denying.calls).toHaveLength(2);
  });
});
