// docs/reference/crds.md is generated from infra/crds (`npm run crds:docs`): this fails while the two
// differ, so a field added to a CRD cannot go undocumented.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { CRD_REFERENCE, crdReference } from '../../../scripts/crd-reference.ts';

describe('the CRD reference', () => {
  it('docs/reference/crds.md is what `npm run crds:docs` writes from infra/crds', () => {
    expect(readFileSync(CRD_REFERENCE, 'utf8')).toBe(crdReference());
  });

  it('lists every kind and the fields users set, with their descriptions', () => {
    const reference = crdReference();
    for (const kind of ['NamespaceTemplate', 'Organization', 'LNamespace', 'NamespaceInitializationConfiguration']) expect(reference).toContain(`## ${kind}\n`);
    expect(reference).toMatch(/\| `spec\.namespaces\.labelSelector\.matchExpressions\[\]\.operator` \| string \| In, NotIn, Exists or DoesNotExist\. \(required\) \|/);
    expect(reference).toContain('| `spec.mode` | string |');
  });
});
