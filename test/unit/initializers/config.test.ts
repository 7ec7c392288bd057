import { describe, expect, it } from '@jest/globals';
import { describePrincipals, furnishInitializer, mergeConfigurations, principalOf, selectInitializers, validateInitializationConfiguration } from '../../../shared/initializers/config.ts';
import { configuration, RECONCILER, SEEDER, SEEDER_SA, VAULT } from './helpers.ts';

describe('validateInitializationConfiguration', () => {
  it('accepts a well-formed configuration', () => {
    expect(validateInitializationConfiguration(configuration('10-init', [SEEDER, VAULT]))).toEqual([]);
  });

  it('names every problem with its path', () => {
    const problems = validateInitializationConfiguration(configuration('bad', [
      { name: 'Vault_Injector', principals: [{ kind: 'Robot', name: 'r2' }] },
      { name: 'furnish', principals: [{ kind: 'User', name: 'alice' }] },
      { name: 'seeder', principals: [{ kind: 'ServiceAccount', name: 'seeder' }, { kind: 'User', name: 'bob', namespace: 'x' }], timeoutSeconds: 0 },
      { name: 'seeder', principals: [], namespaces: { labelSelector: { matchLabel: { a: 'b' } } }, extra: true },
    ]));
    expect(problems).toEqual([
      { path: 'spec.initializers[0].name', message: expect.stringMatching(/^invalid initializer name "Vault_Injector": a lowercase RFC 1123 label/) },
      { path: 'spec.initializers[0].principals[0].kind', message: 'must be one of User, Group, ServiceAccount, not "Robot"' },
      { path: 'spec.initializers[1].name', message: '"furnish" is Furnish\'s own template population, the built-in first initializer; it cannot be redefined' },
      { path: 'spec.initializers[2].principals[0].namespace', message: 'required for a ServiceAccount: the namespace it lives in' },
      { path: 'spec.initializers[2].principals[1].namespace', message: 'only a ServiceAccount has a namespace, not a User' },
      { path: 'spec.initializers[2].timeoutSeconds', message: 'must be a whole number of seconds from 1 to 604800, not 0' },
      { path: 'spec.initializers[3].extra', message: expect.stringContaining('unknown field') },
      { path: 'spec.initializers[3].principals', message: 'required: at least one User, Group or ServiceAccount that completes this initializer' },
      { path: 'spec.initializers[3].namespaces.labelSelector.matchLabel', message: expect.stringContaining('unknown field') },
      { path: 'spec.initializers[3].name', message: 'duplicate initializer "seeder" (also spec.initializers[2].name)' },
    ]);
  });

  it('refuses a missing spec or list', () => {
    expect(validateInitializationConfiguration({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceInitializationConfiguration', metadata: {} })).toEqual([{ path: 'spec', message: 'required: { initializers: [...] }' }]);
    expect(validateInitializationConfiguration({ apiVersion: 'furnish.dev/v1alpha1', kind: 'NamespaceInitializationConfiguration', metadata: {}, spec: {} })).toEqual([{ path: 'spec.initializers', message: 'required: a list of initializers' }]);
  });
});

describe('mergeConfigurations', () => {
  it('takes objects in name order and concatenates their initializers', () => {
    const merged = mergeConfigurations([configuration('20-vault', [VAULT]), configuration('10-seeder', [SEEDER])]);
    expect(merged.initializers.map((i) => [i.name, i.source])).toEqual([['secret-seeder', '10-seeder'], ['vault', '20-vault']]);
    expect(merged.warnings).toEqual([]);
  });

  it('lets a later object redefine a name in place, with a warning', () => {
    const merged = mergeConfigurations([configuration('10-a', [SEEDER, VAULT]), configuration('20-b', [{ ...SEEDER, timeoutSeconds: 5 }])]);
    expect(merged.initializers.map((i) => [i.name, i.timeoutSeconds])).toEqual([['secret-seeder', 5], ['vault', 60]]);
    expect(merged.warnings).toEqual(['initializer "secret-seeder" of NamespaceInitializationConfiguration "20-b" replaces the one of "10-a"']);
  });

  it('leaves out an invalid entry (and never the reserved name), reporting it', () => {
    const merged = mergeConfigurations([configuration('10-a', [{ name: 'furnish', principals: [{ kind: 'User', name: 'mallory' }] }, SEEDER])]);
    expect(merged.initializers.map((i) => i.name)).toEqual(['secret-seeder']);
    expect(merged.problems).toEqual([expect.objectContaining({ configuration: '10-a', path: 'spec.initializers[0].name' })]);
  });
});

describe('selectInitializers', () => {
  const { initializers } = mergeConfigurations([configuration('c', [SEEDER, VAULT])]);
  it('puts furnish first, then every configured initializer whose selector matches', () => {
    expect(selectInitializers({}, false, initializers)).toEqual(['furnish', 'secret-seeder']);
    expect(selectInitializers({ vault: 'on' }, false, initializers)).toEqual(['furnish', 'secret-seeder', 'vault']);
  });
  it('gives an opted-out namespace none', () => {
    expect(selectInitializers({ vault: 'on' }, true, initializers)).toEqual([]);
  });
});

describe('principals', () => {
  const [seeder, vault] = mergeConfigurations([configuration('c', [SEEDER, VAULT])]).initializers;
  it('matches a ServiceAccount by its user name and a Group by membership', () => {
    expect(principalOf({ username: SEEDER_SA }, seeder!)).toBe('ServiceAccount secret-seeder/seeder');
    expect(principalOf({ username: 'system:serviceaccount:other:seeder' }, seeder!)).toBeUndefined();
    expect(principalOf({ username: 'carol', groups: ['vault-admins'] }, vault!)).toBe('Group vault-admins');
    expect(principalOf({ username: 'vault-admins' }, vault!)).toBeUndefined();
  });
  it('the built-in furnish initializer is completed by the configured reconciler patterns', () => {
    const furnish = furnishInitializer([RECONCILER]);
    expect(principalOf({ username: RECONCILER }, furnish)).toBe(RECONCILER);
    expect(principalOf({ username: 'alice' }, furnish)).toBeUndefined();
    expect(describePrincipals(furnish)).toBe(RECONCILER);
  });
});
