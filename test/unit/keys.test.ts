import { describe, expect, it } from '@jest/globals';
import { KEY, SYSTEM_NAMESPACES } from '../../shared/keys.ts';

describe('keys', () => {
  it('keeps every Furnish key under furnish.dev and never under a *.k8s.io prefix', () => {
    const ours = Object.values(KEY).filter((k) => !k.startsWith('applyset.') && k !== KEY.metadataName);
    for (const k of ours) expect(k).toMatch(/^furnish\.dev\/[a-z0-9-]+$/);
    expect(SYSTEM_NAMESPACES).toEqual(['kube-system', 'kube-public', 'kube-node-lease']);
  });
});

describe('toolchain', () => {
  it('runs on the Node.js the repository pins, never the system one', () => {
    const [major] = process.versions.node.split('.').map(Number);
    expect(major).toBeGreaterThanOrEqual(22);
  });
});
