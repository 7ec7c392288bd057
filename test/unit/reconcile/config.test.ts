import { describe, it, expect } from '@jest/globals';
import { callWindowMs, reconcileConfig } from '../../../shared/reconcile/config.ts';
import { relayConfig } from '../../../functions/watch-relay/lib/config.ts';
import { credentialsFor } from '../../../shared/kube/credentials.ts';

describe('reconciler and relay settings', () => {
  it('defaults run the local stack; OIDC needs an audience', () => {
    expect(() => reconcileConfig({})).toThrow(/FURNISH_PUSH_AUDIENCE: is required/);
    const c = reconcileConfig({ FURNISH_PUSH_AUTH: 'off' });
    expect(c).toMatchObject({ cluster: 'local', topics: { namespaces: 'furnish-namespaces', templates: 'furnish-templates' }, push: { mode: 'off', issuer: 'https://accounts.google.com' } });
    expect(reconcileConfig({ FURNISH_PUSH_AUDIENCE: 'https://x/y' }).push.mode).toBe('oidc');
  });

  it('reconcile-template reads in pages of its own size, larger than the relay\'s (fewer round trips before a fan-out)', () => {
    expect(reconcileConfig({ FURNISH_PUSH_AUTH: 'off' }).fanout.pageSize).toBe(2000);
    expect(relayConfig({}).pageSize).toBe(500);
    expect(reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_FANOUT_PAGE_SIZE: '300', FURNISH_LIST_PAGE_SIZE: '50' }).fanout.pageSize).toBe(300);
    expect(() => reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_FANOUT_PAGE_SIZE: '0' })).toThrow(/FURNISH_FANOUT_PAGE_SIZE/);
  });

  it('a delivery\'s time for calls: its timeout less one call\'s timeout and 2 s, refused when that leaves less than one call', () => {
    expect(reconcileConfig({ FURNISH_PUSH_AUTH: 'off' }).deliveryTimeoutSeconds).toBe(300);
    expect(callWindowMs(300, 10_000)).toBe(288_000);
    expect(() => reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_DELIVERY_TIMEOUT_SECONDS: '21' })).toThrow("FURNISH_DELIVERY_TIMEOUT_SECONDS: 21 s leaves 9000 ms for Kubernetes calls once one call's timeout (FURNISH_KUBE_TIMEOUT_MS, 10000 ms) and 2000 ms are kept for the end: give at least 22 s, or a shorter FURNISH_KUBE_TIMEOUT_MS");
    expect(reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_DELIVERY_TIMEOUT_SECONDS: '22' }).deliveryTimeoutSeconds).toBe(22);
    expect(reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_DELIVERY_TIMEOUT_SECONDS: '10', FURNISH_KUBE_TIMEOUT_MS: '4000' }).deliveryTimeoutSeconds).toBe(10);
  });

  it('names the setting at fault', () => {
    expect(() => reconcileConfig({ FURNISH_PUSH_AUTH: 'maybe' })).toThrow(/FURNISH_PUSH_AUTH/);
    expect(() => reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_KUBE_QPS: 'fast' })).toThrow(/FURNISH_KUBE_QPS: must be a number/);
    expect(() => reconcileConfig({ FURNISH_PUSH_AUTH: 'off', FURNISH_CLUSTERS: '{' })).toThrow(/FURNISH_CLUSTERS: not valid JSON/);
    expect(() => relayConfig({ FURNISH_BUS: 'kafka' })).toThrow(/FURNISH_BUS/);
  });

  it('the relay picks Pub/Sub when a project or the emulator is configured', () => {
    expect(relayConfig({}).bus).toBe('memory');
    expect(relayConfig({ PUBSUB_EMULATOR_HOST: '127.0.0.1:8085' }).bus).toBe('pubsub');
    expect(relayConfig({ FURNISH_RESYNC_SECONDS: '0' }).resyncSeconds).toBe(0);
  });

  it('per-cluster credentials: Secret Manager, a kubeconfig file, or the default chain', async () => {
    const sources = { prod: { secret: 'projects/p/secrets/kc/versions/latest', context: 'ctx' }, dev: { kubeconfigPath: '/k', context: 'd' } };
    const read = async (v: string) => `yaml of ${v}`;
    expect(await credentialsFor('prod', sources, read)).toEqual({ kubeconfigYaml: 'yaml of projects/p/secrets/kc/versions/latest', context: 'ctx' });
    expect(await credentialsFor('dev', sources, read)).toEqual({ kubeconfigPath: '/k', context: 'd' });
    expect(await credentialsFor('other', sources, read)).toEqual({});
  });
});
