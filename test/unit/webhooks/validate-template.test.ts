import { describe, expect, it } from '@jest/globals';
import { validateNamespaceTemplate } from '../../../shared/webhooks/handlers/validate-template.ts';
import { admissionRequest, testDeps } from '../../support/fixtures.ts';

describe('validate-template', () => {
  it('admits the template admin created', async () => {
    expect(await validateNamespaceTemplate(admissionRequest('014-mutate-CREATE-namespacetemplates-default-admin'), testDeps())).toMatchObject({ allowed: true });
  });

  it('refuses a broken template with every problem and its path in one denial', async () => {
    const request = admissionRequest('014-mutate-CREATE-namespacetemplates-default-admin');
    const spec = request.object!.spec as { templates: Record<string, unknown>[]; namespaces: unknown };
    spec.templates.push({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's' }, stringData: { a: '$(PASSWORD)' } });
    spec.namespaces = { labelSelector: { matchExpressions: [{ key: 'a', operator: 'Near' }] } };
    const response = await validateNamespaceTemplate(request, testDeps());
    expect(response).toMatchObject({ allowed: false, status: { code: 422, reason: 'Invalid' } });
    const message = response.status!.message!;
    expect(message).toMatch(/^NamespaceTemplate "default" is invalid \(\d+ problems\): /);
    expect(message).toContain('spec.templates[1].metadata.name');
    expect(message).toContain('spec.templates[2]');
    expect(message).toContain('spec.namespaces.labelSelector');
  });
});
