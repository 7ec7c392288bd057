import { describe, it, expect } from '@jest/globals';
import { KEY } from '../../../shared/keys.ts';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { formatRecord, readRecord, recordChange, type AppliedRecord } from '../../../shared/reconcile/record.ts';

const ns = (applied?: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'a', annotations: applied === undefined ? {} : { [KEY.applied]: applied } } });
const record: AppliedRecord = { objects: { '/ConfigMap/a/x': { template: 't', observed: 'o1' }, '/ConfigMap/a/b': { template: 't', observed: '' } }, groupKinds: ['ConfigMap'], applied: ['t'], failed: [] };

describe('the namespace record of what Furnish applied', () => {
  it('round-trips, in one canonical spelling, so an unchanged record is never written again', () => {
    const text = formatRecord(record);
    expect(readRecord(ns(text))).toEqual(record);
    expect(formatRecord({ ...record, objects: Object.fromEntries(Object.entries(record.objects).reverse()) })).toBe(text);
    expect(recordChange(ns(text), record)).toBeNull();
    expect(recordChange(ns(), record)).toBe(text);
  });

  it('holds no per-apply hash: which version is in place is on the objects, so a clean apply leaves it as it is', () => {
    const text = formatRecord(record);
    expect(text).not.toContain('h1');
    expect(JSON.parse(text).o).toEqual({ '/ConfigMap/a/b': ['t'], '/ConfigMap/a/x': ['t', 'o1'] });
  });

  it('an absent, garbled or foreign record reads as none (then everything is read and the record rewritten)', () => {
    expect(readRecord(ns())).toBeNull();
    expect(readRecord(ns('{not json'))).toBeNull();
    expect(readRecord(ns(JSON.stringify({ v: 3, o: {}, gk: [], t: [], f: [] })))).toBeNull();
    // The first format (per object: template, applied hash, observed hash) is read as none: rewritten once.
    expect(readRecord(ns(JSON.stringify({ v: 1, o: { k: ['t', 'h', 'o'] }, gk: [], t: [], f: [] })))).toBeNull();
    expect(readRecord(ns(JSON.stringify({ v: 2, o: { k: ['t', 'h', 'o'] }, gk: [], t: [], f: [] })))).toBeNull();
    expect(readRecord(ns(JSON.stringify({ v: 2, o: {}, gk: 'ConfigMap', t: [], f: [] })))).toBeNull();
  });
});
