// kube-sim against kube-apiserver 1.26.3 on what the namespace reconciler's rollback relies on:
// server-side apply answers 201 when it created the object (200 when it existed), and a delete
// with `preconditions: {uid}` removes only that very object (fixtures delete-uid-*.http).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCluster, type SimCluster } from '../support/kube-sim/index.ts';
import { call, CONFIGMAP, fixture } from './helpers.ts';

let cluster: SimCluster;
beforeAll(async () => {
  cluster = await startCluster({ namespaceDefaultObjects: false });
  await call(cluster, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } } });
});
afterAll(() => cluster.stop());

const path = '/api/v1/namespaces/team-a/configmaps/furnished';
/** Node sends a DELETE body unframed unless told its length. */
function deleteWith(preconditions: Record<string, string>) {
  const body = JSON.stringify({ apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: 'Background', preconditions });
  return call(cluster, 'DELETE', path, { body, headers: { 'Content-Length': String(Buffer.byteLength(body)) } });
}

describe('the rollback\'s calls, as the real server answers them', () => {
  it('apply creates (201) then finds it (200); a delete naming another uid is a 409 naming the Kind; its own uid deletes it', async () => {
    const apply = () => call(cluster, 'PATCH', `${path}?fieldManager=furnish`, { contentType: 'application/apply-patch+yaml', body: CONFIGMAP('furnished', 'team-a') });
    const created = await apply();
    expect(created.status).toBe(fixture('ssa-create').status);
    expect((await apply()).status).toBe(fixture('ssa-noop').status);
    const uid = created.body.metadata.uid as string;

    const real = fixture('delete-uid-conflict');
    const realUid = real.body.message.match(/UID in record \(([^)]+)\)/)[1] as string;
    const conflict = await deleteWith({ uid: '00000000-0000-0000-0000-000000000000' });
    expect(conflict.status).toBe(real.status);
    expect(conflict.headers['content-type']).toBe(real.headers['content-type']);
    expect(conflict.body).toEqual({ ...real.body, message: real.body.message.replace(realUid, uid) });
    expect((await call(cluster, 'GET', path)).status).toBe(200);

    const done = fixture('delete-uid-match');
    const deleted = await deleteWith({ uid });
    expect(deleted.status).toBe(done.status);
    expect(deleted.body).toEqual({ ...done.body, details: { ...done.body.details, uid } });
    expect((await call(cluster, 'GET', path)).status).toBe(404);
  });

  it('a resourceVersion precondition is refused the same way', async () => {
    await call(cluster, 'PATCH', `${path}?fieldManager=furnish`, { contentType: 'application/apply-patch+yaml', body: CONFIGMAP('furnished', 'team-a') });
    const live = (await call(cluster, 'GET', path)).body;
    const reply = await deleteWith({ resourceVersion: '1' });
    expect(reply.status).toBe(409);
    expect(reply.body.details).toEqual({ name: 'furnished', kind: 'ConfigMap' });
    expect(reply.body.message).toBe(`Operation cannot be fulfilled on ConfigMap "furnished": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (${live.metadata.resourceVersion}). The object might have been modified`);
  });
});
