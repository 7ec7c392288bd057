import { describe, expect, it } from '@jest/globals';
import { configFrom, loadConfig } from '../../../shared/config/load.ts';
import { organizationSettings, DEFAULT_ORGANIZATION_SETTINGS, matchesWildcard } from '../../../shared/org/settings.ts';
import { TEST_SECRET, testEnv } from '../../support/fixtures.ts';

const cluster = (organizations: unknown) => ({ publicUrl: 'https://f.example.com', clusters: [{ id: 'c1', jwt: { secret: TEST_SECRET }, organizations }] });

describe('organization settings', () => {
  it('are read from clusters[].organizations, defaults filled in for the rest', () => {
    const config = configFrom(cluster({ enabled: true, privileged: ['group:platform'], defaultNamespaceQuota: 0, allowedLabels: ['team'] }));
    expect(organizationSettings(config.clusters[0]!)).toEqual({ ...DEFAULT_ORGANIZATION_SETTINGS, enabled: true, privileged: ['group:platform'], defaultNamespaceQuota: 0, allowedLabels: ['team'] });
    expect(organizationSettings(configFrom(cluster(undefined)).clusters[0]!).enabled).toBe(false);
  });

  it('name the setting at fault', () => {
    expect(() => configFrom(cluster({ enabled: 'yes' }))).toThrow('configuration clusters[0].organizations.enabled: must be true or false, got "yes"');
    expect(() => configFrom(cluster({ defaultNamespaceQuota: -1 }))).toThrow('configuration clusters[0].organizations.defaultNamespaceQuota: must be an integer of at least 0, got -1');
    expect(() => configFrom(cluster({ allowedLabels: 'team' }))).toThrow('configuration clusters[0].organizations.allowedLabels: must be a list of non-empty strings');
    expect(() => configFrom(cluster({ quota: 3 }))).toThrow(/clusters\[0\]\.organizations\.quota: unknown setting/);
  });

  it('come from the environment too, naming the variable on error', async () => {
    const config = await loadConfig(testEnv({ FURNISH_ORGANIZATIONS: 'true', FURNISH_ORGANIZATION_PRIVILEGED: 'group:ops,root', FURNISH_ORGANIZATION_NAMESPACE_QUOTA: '7' }));
    expect(config.clusters[0]!.organizations).toEqual({ enabled: true, privileged: ['group:ops', 'root'], defaultNamespaceQuota: 7 });
    await expect(loadConfig(testEnv({ FURNISH_ORGANIZATION_NAMESPACE_QUOTA: 'many' }))).rejects.toThrow('FURNISH_ORGANIZATION_NAMESPACE_QUOTA (clusters[0].organizations.defaultNamespaceQuota): must be an integer ≥ 0, got "many"');
  });

  it('wildcards: * matches any run of characters, anywhere', () => {
    expect(matchesWildcard('app.kubernetes.io/name', 'app.kubernetes.io/*')).toBe(true);
    expect(matchesWildcard('kube-x', 'kube-*')).toBe(true);
    expect(matchesWildcard('a.example.com/team', '*.example.com/*')).toBe(true);
    expect(matchesWildcard('example.com/team', '*.example.com/*')).toBe(false);
    expect(matchesWildcard('team', 'team')).toBe(true);
    expect(matchesWildcard('teams', 'team')).toBe(false);
  });
});
