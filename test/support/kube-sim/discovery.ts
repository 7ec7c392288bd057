// Discovery and version: /version, /api, /api/v1, /apis, /apis/<group>, /apis/<group>/<version>,
// in the legacy (unaggregated) format, which kubectl 1.32 and client libraries fall back to when
// the server does not answer with the aggregated `apidiscovery.k8s.io` format. CRDs appear as
// soon as they are created.
import { createHash } from 'node:crypto';
import { pathNotFound } from './errors.ts';
import type { ResourceType } from './resources.ts';
import type { Sim } from './sim.ts';

export function versionInfo(sim: Sim): Record<string, string> {
  const [, major = '1', minor = '32'] = /^v(\d+)\.(\d+)/.exec(sim.options.gitVersion) ?? [];
  return {
    major, minor, gitVersion: sim.options.gitVersion, gitCommit: '0000000000000000000000000000000000000000', gitTreeState: 'clean',
    buildDate: '2026-01-01T00:00:00Z', goVersion: 'go1.23.0', compiler: 'gc', platform: 'linux/amd64',
  };
}

function storageVersionHash(t: ResourceType): string {
  return createHash('sha256').update(`${t.group}/${t.version}/${t.kind}`).digest().subarray(0, 8).toString('base64');
}

function resourceEntries(t: ResourceType): Array<Record<string, unknown>> {
  const main: Record<string, unknown> = {
    name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: t.verbs,
    ...(t.shortNames.length > 0 ? { shortNames: t.shortNames } : {}),
    ...(t.categories ? { categories: t.categories } : {}),
    ...(t.verbs.includes('get') ? { storageVersionHash: storageVersionHash(t) } : {}),
  };
  const status = t.statusSubresource
    ? [{ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] }]
    : [];
  // ServiceAccounts' TokenRequest subresource, listed as kube-apiserver lists it.
  const token = t.kind === 'ServiceAccount' && t.group === ''
    ? [{ name: `${t.plural}/token`, singularName: '', namespaced: true, group: 'authentication.k8s.io', version: 'v1', kind: 'TokenRequest', verbs: ['create'] }]
    : [];
  // The scale subresource: kubectl scale finds the Scale's group, version and kind here.
  const scale = t.scaleSubresource
    ? [{ name: `${t.plural}/scale`, singularName: '', namespaced: t.namespaced, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] }]
    : [];
  return [main, ...status, ...scale, ...token];
}

export function resourceList(sim: Sim, group: string, version: string): Record<string, unknown> {
  const types = sim.registry.all().filter((t) => t.group === group && t.version === version);
  if (types.length === 0) throw pathNotFound();
  const resources = types.sort((a, b) => (a.plural < b.plural ? -1 : 1)).flatMap(resourceEntries);
  const groupVersion = group ? `${group}/${version}` : version;
  return group
    ? { kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources }
    : { kind: 'APIResourceList', groupVersion, resources };
}

export function coreVersions(host: string): Record<string, unknown> {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: host }] };
}

function groupEntry(name: string, versions: string[]): Record<string, unknown> {
  const entries = versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v }));
  return { name, versions: entries, preferredVersion: entries[0] };
}

export function groupList(sim: Sim): Record<string, unknown> {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...sim.registry.groups()].map(([name, versions]) => groupEntry(name, versions)) };
}

export function group(sim: Sim, name: string): Record<string, unknown> {
  const versions = sim.registry.groups().get(name);
  if (!versions) throw pathNotFound();
  return { kind: 'APIGroup', apiVersion: 'v1', ...groupEntry(name, versions) };
}

