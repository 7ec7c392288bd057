import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../../shared/kube/types.ts';
import { MAX_TEMPLATE_BYTES, validateTemplate } from '../../../shared/render/validate.ts';
import type { NamespaceTemplate } from '../../../shared/render/types.ts';
import { configMap, template } from './helpers.ts';

type Mutable = NamespaceTemplate & Record<string, unknown>;

/** A valid template changed by `change`; each case below breaks exactly one thing. */
function broken(change: (t: Mutable) => void): unknown {
  const t = template('base', { objects: [configMap('settings', { a: 'b' })] }) as Mutable;
  change(t);
  return t;
}

/** A valid template whose only object is `object`. */
function holding(object: unknown): unknown {
  return broken((t) => (t.spec.templates = [object as KubeObject]));
}

const obj = (apiVersion: string, kind: string, name = 'x', extra: Record<string, unknown> = {}) => ({ apiVersion, kind, metadata: { name, ...extra } });

describe('validateTemplate accepts', () => {
  const examples = join(import.meta.dirname, '..', '..', '..', 'examples');
  const files = readdirSync(examples).filter((f) => f.endsWith('.yaml'));

  it('has examples to check', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  it.each(files)('examples/%s', (file) => {
    for (const doc of parseAllDocuments(readFileSync(join(examples, file), 'utf8')) as { toJS(): unknown }[]) {
      expect(validateTemplate(doc.toJS())).toEqual([]);
    }
  });

  it.each([
    ['no selector at all', broken((t) => delete t.spec.namespaces)],
    ['a null selector', broken((t) => (t.spec.namespaces = { labelSelector: null }))],
    ['no templates', broken((t) => delete t.spec.templates)],
    ['every enum value', broken((t) => Object.assign(t.spec, { deletionPolicy: 'Orphan', mode: 'CreateOnly' }))],
    ['namespace $(NAMESPACE)', holding(obj('v1', 'ConfigMap', 'x', { namespace: '$(NAMESPACE)' }))],
    ['an escaped unknown token', holding({ ...obj('v1', 'ConfigMap'), data: { cmd: 'echo $$(POD_NAME)' } })],
    ['$(NAMESPACE) in a name that stays short enough', holding(obj('v1', 'ConfigMap', '$(NAMESPACE)-settings'))],
    ['$(ORGANIZATION) as a label value', holding(obj('v1', 'ConfigMap', 'x', { labels: { org: '$(ORGANIZATION)' } }))],
    ['$(CREATOR) in an annotation value', holding(obj('v1', 'ConfigMap', 'x', { annotations: { owner: '$(CREATOR)' } }))],
    ['a RoleBinding name with a colon', holding(obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'furnish:admin'))],
    ['a custom namespaced kind', holding(obj('example.com/v1beta1', 'Widget'))],
    ['Role and RoleBinding (namespaced RBAC)', broken((t) => (t.spec.templates = [obj('rbac.authorization.k8s.io/v1', 'Role'), obj('rbac.authorization.k8s.io/v1', 'RoleBinding')]))],
    ['the same name for two kinds', broken((t) => (t.spec.templates = [obj('v1', 'ConfigMap'), obj('v1', 'Secret')]))],
    ['require-permission "false"', broken((t) => (t.metadata.annotations = { 'furnish.dev/require-permission': 'false' }))],
  ])('%s', (_name, tpl) => {
    expect(validateTemplate(tpl)).toEqual([]);
  });
});

describe('validateTemplate refuses, with the path of the problem', () => {
  const long = 'a'.repeat(64);
  const cases: [string, unknown, string, RegExp][] = [
    // The NamespaceTemplate itself.
    ['null', null, '(root)', /must be an object \(a NamespaceTemplate\)/],
    ['a string', 'kind: NamespaceTemplate', '(root)', /must be an object/],
    ['a list', [], '(root)', /must be an object/],
    ['wrong apiVersion', broken((t) => (t.apiVersion = 'furnish.dev/v1')), 'apiVersion', /must be "furnish.dev\/v1alpha1", found "furnish.dev\/v1"/],
    ['wrong kind', broken((t) => (t.kind = 'ConfigMap')), 'kind', /must be "NamespaceTemplate", found "ConfigMap"/],
    ['no metadata', broken((t) => delete (t as Partial<Mutable>).metadata), 'metadata', /Required value/],
    ['no name', broken((t) => delete t.metadata.name), 'metadata.name', /Required value/],
    ['invalid name', broken((t) => (t.metadata.name = 'Base')), 'metadata.name', /"Base": a lowercase RFC 1123 subdomain/],
    ['name too long for a label value', broken((t) => (t.metadata.name = long)), 'metadata.name', /must be no more than 63 characters \(it is the value of label furnish.dev\/template\)/],
    ['require-permission not "true"/"false"', broken((t) => (t.metadata.annotations = { 'furnish.dev/require-permission': 'yes' })), 'metadata.annotations["furnish.dev/require-permission"]', /must be "true" or "false", found "yes"/],
    ['apply not "disable"', broken((t) => (t.metadata.annotations = { 'furnish.dev/apply': 'disabled' })), 'metadata.annotations["furnish.dev/apply"]', /must be "disable", found "disabled"/],
    ['annotations not a map', broken((t) => ((t.metadata as Record<string, unknown>).annotations = 'x')), 'metadata.annotations', /must be an object/],
    // spec.
    ['no spec', broken((t) => delete (t as Partial<Mutable>).spec), 'spec', /Required value/],
    ['spec a list', broken((t) => ((t as Record<string, unknown>).spec = [])), 'spec', /must be an object/],
    ['misspelt spec field', broken((t) => ((t.spec as Record<string, unknown>).template = [])), 'spec.template', /unknown field \(expected one of namespaces, templates, deletionPolicy, mode, existingNamespaces, protect\)/],
    ['namespaces not an object', broken((t) => ((t.spec as Record<string, unknown>).namespaces = 'all')), 'spec.namespaces', /must be an object/],
    ['misspelt namespaces field', broken((t) => ((t.spec as Record<string, unknown>).namespaces = { selector: {} })), 'spec.namespaces.selector', /unknown field/],
    [
      'invalid selector (parseSelector problems, with their paths)',
      broken((t) => (t.spec.namespaces = { labelSelector: { matchExpressions: [{ key: 'env', operator: 'Exists', values: ['x'] }] } })),
      'spec.namespaces.labelSelector.matchExpressions[0].values',
      /may not be specified when `operator` is 'Exists' or 'DoesNotExist'/,
    ],
    ['deletionPolicy', broken((t) => ((t.spec as Record<string, unknown>).deletionPolicy = 'Keep')), 'spec.deletionPolicy', /Unsupported value: "Keep": supported values: "Delete", "Orphan"/],
    ['mode', broken((t) => ((t.spec as Record<string, unknown>).mode = 'Always')), 'spec.mode', /Unsupported value: "Always": supported values: "Enforce", "CreateOnly"/],
    ['templates not a list', broken((t) => ((t.spec as Record<string, unknown>).templates = { a: 1 })), 'spec.templates', /must be a list/],
    // Objects of spec.templates.
    ['object not an object', holding('kind: ConfigMap'), 'spec.templates[0]', /must be an object/],
    ['object without apiVersion', holding({ kind: 'ConfigMap', metadata: { name: 'x' } }), 'spec.templates[0].apiVersion', /Required value/],
    ['object with a malformed apiVersion', holding(obj('apps/v1/extra', 'Deployment')), 'spec.templates[0].apiVersion', /must be "version" or "group\/version"/],
    ['object with an invalid group', holding(obj('Apps/v1', 'Deployment')), 'spec.templates[0].apiVersion', /"Apps\/v1": group a lowercase RFC 1123 subdomain/],
    ['object without kind', holding({ apiVersion: 'v1', metadata: { name: 'x' } }), 'spec.templates[0].kind', /Required value/],
    ['object without metadata', holding({ apiVersion: 'v1', kind: 'ConfigMap' }), 'spec.templates[0].metadata', /Required value/],
    ['object without name', holding({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }), 'spec.templates[0].metadata.name', /Required value/],
    ['generateName', holding(obj('v1', 'ConfigMap', 'x', { generateName: 'x-' })), 'spec.templates[0].metadata.generateName', /not supported/],
    ['a literal namespace', holding(obj('v1', 'ConfigMap', 'x', { namespace: 'kube-system' })), 'spec.templates[0].metadata.namespace', /"kube-system": must be absent or "\$\(NAMESPACE\)"/],
    ['a namespace built from a token', holding(obj('v1', 'ConfigMap', 'x', { namespace: '$(ORGANIZATION)' })), 'spec.templates[0].metadata.namespace', /must be absent or/],
    ['an unknown token', holding({ ...obj('v1', 'ConfigMap'), data: { a: ['x', 'hi $(USER) and $(HOME)'] } }), 'spec.templates[0].data.a[1]', /unknown token \$\(USER\), \$\(HOME\): known tokens are \$\(CREATOR\), \$\(NAMESPACE\), \$\(ORGANIZATION\)/],
    ['a token in a key', holding({ ...obj('v1', 'ConfigMap'), data: { 'cfg-$(NAMESPACE)': 'x' } }), 'spec.templates[0].data["cfg-$(NAMESPACE)"]', /tokens are not replaced in keys/],
    ['a token in a nested key', holding({ ...obj('v1', 'ConfigMap'), spec: { a: [{ '$(CREATOR)': 1 }] } }), 'spec.templates[0].spec.a[0]["$(CREATOR)"]', /tokens are not replaced in keys/],
    ['an invalid name', holding(obj('v1', 'ConfigMap', 'Settings')), 'spec.templates[0].metadata.name', /^"Settings" is not a valid ConfigMap name: a lowercase RFC 1123 subdomain/],
    ['a Service name that is no DNS-1035 label', holding(obj('v1', 'Service', '1web')), 'spec.templates[0].metadata.name', /is not a valid Service name: a DNS-1035 label/],
    ['a RoleBinding name with a slash', holding(obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'a/b')), 'spec.templates[0].metadata.name', /may not contain '\/'/],
    ['$(CREATOR) in a name', holding(obj('v1', 'ConfigMap', '$(CREATOR)-settings')), 'spec.templates[0].metadata.name', /"\$\(CREATOR\)-settings" \(once \$\(CREATOR\) is a user name such as "https:\/\/issuer.example.com#Alice@Example.com"\) is not a valid ConfigMap name/],
    ['$(CREATOR) in a RoleBinding name', holding(obj('rbac.authorization.k8s.io/v1', 'RoleBinding', 'admin-$(CREATOR)')), 'spec.templates[0].metadata.name', /may not contain '\/'/],
    ['$(NAMESPACE) making a Service name too long', holding(obj('v1', 'Service', '$(NAMESPACE)-web')), 'spec.templates[0].metadata.name', /once \$\(NAMESPACE\) is a 63-character namespace name\) is not a valid Service name: must be no more than 63 characters/],
    ['$(ORGANIZATION) putting a dot in a Service name', holding(obj('v1', 'Service', '$(ORGANIZATION)')), 'spec.templates[0].metadata.name', /once \$\(ORGANIZATION\) is a 63-character organization name containing '.'\) is not a valid Service name/],
    ['$(NAMESPACE) making a label value too long', holding(obj('v1', 'ConfigMap', 'x', { labels: { ns: 'team-$(NAMESPACE)' } })), 'spec.templates[0].metadata.labels.ns', /is not a valid label value: must be no more than 63 characters/],
    ['$(CREATOR) as a label value', holding(obj('v1', 'ConfigMap', 'x', { labels: { owner: '$(CREATOR)' } })), 'spec.templates[0].metadata.labels.owner', /is not a valid label value/],
    ['an invalid label value', holding(obj('v1', 'ConfigMap', 'x', { labels: { a: 'b c' } })), 'spec.templates[0].metadata.labels.a', /^"b c" is not a valid label value/],
    ['a label value that is no string', holding(obj('v1', 'ConfigMap', 'x', { labels: { version: 1.1 } })), 'spec.templates[0].metadata.labels.version', /must be a string, found 1.1 \(quote it in YAML\)/],
    ['an annotation value that is no string', holding(obj('v1', 'ConfigMap', 'x', { annotations: { enabled: true } })), 'spec.templates[0].metadata.annotations.enabled', /must be a string, found true/],
    ['an invalid label key', holding(obj('v1', 'ConfigMap', 'x', { labels: { '-a': 'b' } })), 'spec.templates[0].metadata.labels["-a"]', /invalid label key: name part must consist/],
    ['an invalid annotation key', holding(obj('v1', 'ConfigMap', 'x', { annotations: { 'a/b/c': 'b' } })), 'spec.templates[0].metadata.annotations["a/b/c"]', /invalid annotation key/],
    ['labels not a map', holding(obj('v1', 'ConfigMap', 'x', { labels: ['a'] })), 'spec.templates[0].metadata.labels', /must be an object of label key to string/],
    ['label furnish.dev/template', holding(obj('v1', 'ConfigMap', 'x', { labels: { 'furnish.dev/template': 'other' } })), 'spec.templates[0].metadata.labels["furnish.dev/template"]', /is set by Furnish/],
    ['an ApplySet label', holding(obj('v1', 'ConfigMap', 'x', { labels: { 'applyset.kubernetes.io/part-of': 'x' } })), 'spec.templates[0].metadata.labels["applyset.kubernetes.io/part-of"]', /is set by Furnish/],
    ['the ApplySet parent name', holding(obj('v1', 'ConfigMap', 'furnish-applyset')), 'spec.templates[0].metadata.name', /reserved for the ApplySet parent/],
    ['the same object twice', broken((t) => (t.spec.templates = [configMap('a'), configMap('b'), configMap('a')])), 'spec.templates[2]', /defines the same object as spec.templates\[0\]/],
    ['the same object twice once tokens are replaced', broken((t) => (t.spec.templates = [configMap('$(NAMESPACE)'), configMap('$(NAMESPACE)')])), 'spec.templates[1]', /same object as spec.templates\[0\]/],
    ['too large for etcd', holding({ ...obj('v1', 'ConfigMap'), data: { blob: 'x'.repeat(MAX_TEMPLATE_BYTES) } }), '(root)', /bytes as JSON; etcd stores objects of at most 1.5 MiB \(1572864 bytes\)/],
  ];

  it.each(cases)('%s', (_name, tpl, path, message) => {
    expect(validateTemplate(tpl)).toEqual([{ path, message: expect.stringMatching(message) }]);
  });

  const clusterScoped: [string, string][] = [
    ['v1', 'Namespace'],
    ['v1', 'Node'],
    ['v1', 'PersistentVolume'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRole'],
    ['rbac.authorization.k8s.io/v1', 'ClusterRoleBinding'],
    ['apiextensions.k8s.io/v1', 'CustomResourceDefinition'],
    ['storage.k8s.io/v1', 'StorageClass'],
    ['storage.k8s.io/v1', 'CSIDriver'],
    ['scheduling.k8s.io/v1', 'PriorityClass'],
    ['admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration'],
    ['admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration'],
    ['admissionregistration.k8s.io/v1', 'ValidatingAdmissionPolicy'],
    ['apiregistration.k8s.io/v1', 'APIService'],
    ['networking.k8s.io/v1', 'IngressClass'],
    ['node.k8s.io/v1', 'RuntimeClass'],
    ['certificates.k8s.io/v1', 'CertificateSigningRequest'],
    ['flowcontrol.apiserver.k8s.io/v1', 'FlowSchema'],
    ['furnish.dev/v1alpha1', 'NamespaceTemplate'],
    ['furnish.dev/v1alpha1', 'Organization'],
  ];
  it.each(clusterScoped)('cluster-scoped %s %s', (apiVersion, kind) => {
    expect(validateTemplate(holding(obj(apiVersion, kind)))).toEqual([
      { path: 'spec.templates[0].kind', message: expect.stringMatching(/is cluster-scoped: a NamespaceTemplate may only hold namespaced objects$/) },
    ]);
  });

  it('reports every problem of a template, in document order', () => {
    const tpl = broken((t) => {
      t.apiVersion = 'v1';
      t.spec.templates = [obj('v1', 'Namespace', 'Bad'), obj('v1', 'ConfigMap', 'ok', { generateName: 'x' })];
    });
    expect(validateTemplate(tpl).map((p) => p.path)).toEqual([
      'apiVersion',
      'spec.templates[0].kind',
      'spec.templates[0].metadata.name',
      'spec.templates[1].metadata.generateName',
    ]);
  });
});
