// Builders for the render tests: a template or a namespace reads as the scenario it sets up.
import type { KubeObject, LabelSelector, StringMap } from '../../../shared/kube/types.ts';
import type { NamespaceInfo, NamespaceTemplate, NamespaceTemplateSpec } from '../../../shared/render/types.ts';

export interface TemplateOptions {
  selector?: LabelSelector | null;
  objects?: KubeObject[];
  annotations?: StringMap;
  spec?: Partial<NamespaceTemplateSpec>;
}

export function template(name: string, opts: TemplateOptions = {}): NamespaceTemplate {
  return {
    apiVersion: 'furnish.dev/v1alpha1',
    kind: 'NamespaceTemplate',
    metadata: { name, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
    spec: {
      namespaces: { labelSelector: opts.selector ?? {} },
      templates: opts.objects ?? [configMap(`${name}-settings`)],
      ...opts.spec,
    },
  };
}

export function configMap(name: string, data: StringMap = {}, metadata: Partial<KubeObject['metadata']> = {}): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...metadata }, data };
}

export function namespace(name: string, labels: StringMap = {}, annotations: StringMap = {}): NamespaceInfo {
  return { name, labels: { 'kubernetes.io/metadata.name': name, ...labels }, annotations };
}

export const ctx = { namespace: 'team-a', creator: 'alice@example.com', organization: 'acme' };
