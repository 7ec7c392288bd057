// infra/ as a whole: what `kubectl kustomize infra` renders is everything Furnish puts in a
// cluster, in one namespace that Furnish itself leaves alone.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import { KEY } from '../../shared/keys.ts';
import type { KubeObject } from '../../shared/kube/types.ts';
import { describeWithTool } from '../support/tools.ts';

const infra = join(import.meta.dirname, '..', '..', 'infra');
let objects: KubeObject[] = [];
const describeKubectl = describeWithTool('kubectl', 'renders infra/ with its built-in kustomize');

beforeAll(async () => {
  const { stdout } = await promisify(execFile)('kubectl', ['kustomize', infra], { maxBuffer: 16 << 20 });
  objects = parseAllDocuments(stdout).map((d) => d.toJS() as KubeObject);
});

const named = (kind: string) => objects.filter((o) => o.kind === kind).map((o) => o.metadata.name).sort();

describeKubectl('kubectl kustomize infra', () => {
  it('renders the CRDs, the webhooks, the relay and both identities', () => {
    expect(named('CustomResourceDefinition')).toEqual(['lnamespaces.furnish.dev', 'namespaceinitializationconfigurations.furnish.dev', 'namespacetemplates.furnish.dev', 'organizations.furnish.dev']);
    expect(named('MutatingWebhookConfiguration')).toEqual(['furnish-mutate-lnamespace', 'furnish-mutate-namespace', 'furnish-mutate-pod']);
    expect(named('ValidatingWebhookConfiguration')).toEqual(['furnish-guard-initializing', 'furnish-protect-objects', 'furnish-validate-namespace', 'furnish-validate-organization', 'furnish-validate-template']);
    expect(named('Deployment')).toEqual(['furnish-relay']);
    expect(named('ServiceAccount')).toEqual(expect.arrayContaining(['furnish-reconciler', 'furnish-webhook']));
  });

  it('puts every namespaced object in furnish-system, which is opted out of every template', () => {
    const ns = objects.find((o) => o.kind === 'Namespace');
    expect(ns?.metadata).toMatchObject({ name: 'furnish-system', annotations: { [KEY.optOut]: 'true' } });
    for (const o of objects.filter((x) => x.kind === 'ServiceAccount' || x.kind === 'Deployment')) expect(o.metadata.namespace).toBe('furnish-system');
  });
});
