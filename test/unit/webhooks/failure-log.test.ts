// A handler that crashes: the caller gets a 500 metav1.Status naming the request, and the failure
// is one structured log line (severity ERROR, the request uid, the stack), through the same
// logger as every other component, never a bare console line.
import { describe, expect, it, jest } from '@jest/globals';
import * as functions from '@google-cloud/functions-framework';
import { getTestServer } from '@google-cloud/functions-framework/testing';
import request from 'supertest';
import type { ClusterConfig } from '../../../shared/config/types.ts';
import { collectingLogger } from '../../../shared/log.ts';
import { webhookHttpFunction, webhookLogger } from '../../../shared/webhooks/http.ts';
import { admissionFixture, testDeps } from '../../support/fixtures.ts';

describe('a crashing webhook', () => {
  it('answers 500 and logs one ERROR entry with the uid and the stack', async () => {
    const log = collectingLogger();
    functions.http('crash-test', webhookHttpFunction({
      webhook: 'validate-namespace',
      handler: () => { throw new Error('boom in the handler'); },
      authenticator: { cached: () => ({ ok: true, cluster: {} as ClusterConfig }), authenticate: async () => ({ ok: true, cluster: {} as ClusterConfig }) },
      depsFor: () => testDeps(),
      maxBodyBytes: 1 << 20,
      log,
    }));
    const { review } = admissionFixture('004-validate-CREATE-namespaces-priv-b-bob');
    const res = await request(getTestServer('crash-test')).post('/').set('content-type', 'application/json').send(JSON.stringify(review));
    expect(res.status).toBe(500);
    expect(res.body).toMatchObject({ kind: 'Status', code: 500, message: `internal error deciding request ${review.request.uid}: boom in the handler` });
    expect(log.lines).toEqual([{ severity: 'ERROR', message: 'webhook failed', fields: { uid: review.request.uid, error: expect.stringContaining('boom in the handler') } }]);
  });

  it("by default, one JSON line with severity on stderr, as Cloud Logging parses it", () => {
    const written: string[] = [];
    const spy = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (written.push(String(chunk)), true));
    try {
      webhookLogger('validate-namespace').log('ERROR', 'webhook failed', { uid: 'u-1' });
    } finally {
      spy.mockRestore();
    }
    expect(written).toHaveLength(1);
    expect(written[0]!.endsWith('\n')).toBe(true);
    expect(JSON.parse(written[0]!)).toMatchObject({ severity: 'ERROR', component: 'validate-namespace', message: 'webhook failed', uid: 'u-1' });
  });
});
