import { describe, it, expect } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { classifyApiError } from '../../../shared/kube/errors.ts';
import { API_RETRY, backoffDelay, hasAttemptsLeft, parseRetryAfter } from '../../../shared/kube/retry.ts';

describe('classifyApiError', () => {
  it.each([0, 408, 429, 500, 502, 503, 504])('HTTP %i is transient', (status) => {
    expect(classifyApiError({ status }).class).toBe('transient');
  });

  it.each([[400, 'BadRequest'], [403, 'Forbidden'], [404, 'NotFound'], [422, 'Invalid']])('HTTP %i %s is permanent: reported once, acknowledged', (status, reason) => {
    const c = classifyApiError({ status, reason });
    expect(c.class).toBe('permanent');
    expect(c.why).toBe(`HTTP ${status} ${reason}`);
  });

  it('409 Conflict retries but 409 AlreadyExists is for the caller to accept', () => {
    expect(classifyApiError({ status: 409, reason: 'Conflict' }).class).toBe('transient');
    expect(classifyApiError({ status: 409, reason: 'AlreadyExists' }).class).toBe('permanent');
  });

  it('the 500 of an object the API server cannot convert (a server-side apply of a quantity that does not parse) is permanent; other 500s retry', () => {
    // kube-apiserver 1.26.3's answers, as captured: a quantity that does not parse, a string for replicas.
    const captured = (name: string) => JSON.parse(readFileSync(join(import.meta.dirname, `../../fixtures/kube-apiserver-1.26/api/${name}.http`), 'utf8').split('\n\n').slice(1).join('\n\n'));
    for (const real of [captured('quantity-invalid-apply'), captured('ssa-typed-patch-invalid')]) {
      expect(real).toMatchObject({ code: 500 });
      expect(classifyApiError({ status: real.code, reason: real.reason, message: real.message })).toMatchObject({ class: 'permanent', why: expect.stringContaining('cannot convert the object') });
      expect(classifyApiError({ status: 500, reason: 'InternalError', message: real.message }).class).toBe('transient');
    }
    expect(classifyApiError({ status: 500, message: 'etcdserver: request timed out' }).class).toBe('transient');
  });

  it('names a missing response', () => {
    expect(classifyApiError({ status: 0 }).why).toBe('no response (network or timeout)');
  });
});

describe('backoffDelay', () => {
  const noJitter = { ...API_RETRY, jitter: 0 };

  it('grows exponentially and is capped', () => {
    expect([1, 2, 3, 4, 10].map((a) => backoffDelay(noJitter, a))).toEqual([100, 200, 400, 800, 2000]);
  });

  it('jitter stays within [1-jitter, 1] of the exponential delay', () => {
    expect(backoffDelay(API_RETRY, 3, () => 0)).toBe(200);
    expect(backoffDelay(API_RETRY, 3, () => 0.999999)).toBe(400);
  });

  it('honours a longer Retry-After, capped at maxMs', () => {
    expect(backoffDelay(noJitter, 1, Math.random, 1)).toBe(1000);
    expect(backoffDelay(noJitter, 1, Math.random, 3600)).toBe(2000);
  });

  it('counts attempts including the first', () => {
    expect(hasAttemptsLeft(API_RETRY, 3)).toBe(true);
    expect(hasAttemptsLeft(API_RETRY, 4)).toBe(false);
  });

  it('parses Retry-After seconds and ignores dates or junk', () => {
    expect(parseRetryAfter('2')).toBe(2);
    expect(parseRetryAfter(['5'])).toBe(5);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:00 GMT')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});

describe('TokenBucket and the client seam', () => {
  it('lets a burst through, then spaces requests at the sustained rate', async () => {
    const { TokenBucket } = await import('../../../shared/kube/ratelimit.ts');
    let now = 0;
    const bucket = new TokenBucket(10, 2, () => now);
    expect([bucket.reserve(), bucket.reserve()]).toEqual([0, 0]);
    expect(bucket.reserve()).toBe(100);
    now = 1000;
    expect(bucket.reserve()).toBe(0);
  });

  it('names the resource a write went to', async () => {
    const { resourceOfPath } = await import('../../../shared/kube/client.ts');
    expect(resourceOfPath('/api/v1/namespaces/team-a/configmaps/x')).toBe('configmaps');
    expect(resourceOfPath('/api/v1/namespaces/team-a')).toBe('namespaces');
    expect(resourceOfPath('/api/v1/namespaces/team-a/status')).toBe('namespaces/status');
    expect(resourceOfPath('/api/v1/namespaces/team-a/events')).toBe('events');
    expect(resourceOfPath('/apis/furnish.dev/v1alpha1/namespacetemplates/t/status')).toBe('namespacetemplates/status');
    expect(resourceOfPath('/apis/networking.k8s.io/v1/namespaces/a/networkpolicies?fieldManager=furnish')).toBe('networkpolicies');
  });
});
