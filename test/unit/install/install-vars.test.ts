// `furnish install --vars` and `furnish webhooks --vars`: one cluster's entry of Terraform's output
// install_vars is the one source of the relay's topics, project and identity and of the webhooks'
// URL; a malformed file or a flag that says otherwise is refused before any cluster is touched.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../shared/cli/command.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';
import { billingTapConfig } from '../../../shared/billing/tap.ts';
import { relayConfig } from '../../../functions/watch-relay/lib/config.ts';
import { agreedValue, defaultTopicVars, parseInstallVars, TOPIC_VARS } from '../../../shared/install/vars.ts';
import { policySettingsOption } from '../../../shared/cli/webhooks-command.ts';
import { defaultPolicySettings } from '../../../shared/config/types.ts';

const DIGEST = `europe-docker.pkg.dev/p/furnish/relay@sha256:${'0f'.repeat(32)}`;
const TOPICS = Object.fromEntries(Object.keys(TOPIC_VARS).map((name) => [name, `acme-${name.slice('FURNISH_TOPIC_'.length).toLowerCase()}`]));
const FROM_TERRAFORM = { ...TOPICS, FURNISH_CLUSTER_ID: 'prod', FURNISH_PROJECT: 'acme-prod', FURNISH_RELAY_SERVICE_ACCOUNT: 'acme-relay@acme-prod.iam.gserviceaccount.com', FURNISH_FUNCTIONS_URL: 'https://europe-west1-acme-prod.cloudfunctions.net', FURNISH_CA_BUNDLE: '' };

describe('parseInstallVars', () => {
  it('takes one cluster\'s entry of install_vars as it is', () => {
    expect(parseInstallVars(JSON.stringify(FROM_TERRAFORM), 'prod.json')).toEqual(FROM_TERRAFORM);
  });

  it('refuses what is not one object of FURNISH_* strings, naming the file and the key', () => {
    expect(() => parseInstallVars('{', 'prod.json')).toThrow(/^prod\.json: not JSON/);
    expect(() => parseInstallVars('[]', 'prod.json')).toThrow('prod.json: expected one JSON object of FURNISH_* variables (one cluster\'s entry of terraform output install_vars), got an array');
    expect(() => parseInstallVars(JSON.stringify({ prod: FROM_TERRAFORM }), 'all.json')).toThrow('all.json: "prod" is not a FURNISH_* variable name (is this the whole output rather than one cluster\'s entry?)');
    expect(() => parseInstallVars(JSON.stringify({ ...FROM_TERRAFORM, FURNISH_PROJECT: 7 }), 'prod.json')).toThrow('prod.json: FURNISH_PROJECT: expected a string, got 7');
  });

  it('refuses a file without every topic: the relay would fall back to topics that may not exist', () => {
    const { FURNISH_TOPIC_BILLING: _billing, FURNISH_TOPIC_TEMPLATES: _templates, ...rest }: Record<string, string> = FROM_TERRAFORM;
    expect(() => parseInstallVars(JSON.stringify(rest), 'prod.json')).toThrow('prod.json: lacks FURNISH_TOPIC_TEMPLATES, FURNISH_TOPIC_BILLING: the relay would publish to topics Terraform did not create');
  });

  it('judges each topic as the relay reads it: an empty topic is refused, naming it; an empty billing topic is billing off', () => {
    for (const name of Object.keys(TOPIC_VARS).filter((n) => n !== 'FURNISH_TOPIC_BILLING')) {
      const text = JSON.stringify({ ...FROM_TERRAFORM, [name]: '' });
      expect(() => parseInstallVars(text, 'prod.json')).toThrow(`prod.json: ${name}: is empty, and no topic has an empty name`);
      // The relay, given the same value (envsubst of that file), refuses it the same way.
      expect(() => relayConfig({ ...FROM_TERRAFORM, [name]: '' })).toThrow(`${name}: is empty, and no topic has an empty name`);
    }
    const billingOff = { ...FROM_TERRAFORM, FURNISH_TOPIC_BILLING: '' };
    expect(parseInstallVars(JSON.stringify(billingOff), 'prod.json')).toEqual(billingOff);
    const relay = relayConfig(billingOff);
    expect(billingTapConfig(billingOff, relay.cluster, relay.pageSize)).toBeNull();
  });

  it('without a file, names the topics of Terraform\'s default prefix, the settings\' defaults', () => {
    expect(Object.values(defaultTopicVars()).sort()).toEqual(['furnish-billing', 'furnish-lnamespaces', 'furnish-namespaces', 'furnish-templates']);
  });
});

describe('agreedValue', () => {
  it('takes the flag or the file, and refuses the two disagreeing', () => {
    expect(agreedValue('project', undefined, 'FURNISH_PROJECT', FROM_TERRAFORM, 'prod.json')).toBe('acme-prod');
    expect(agreedValue('project', 'acme-prod', 'FURNISH_PROJECT', FROM_TERRAFORM, 'prod.json')).toBe('acme-prod');
    expect(agreedValue('project', 'p', 'FURNISH_PROJECT', {}, '')).toBe('p');
    expect(agreedValue('project', undefined, 'FURNISH_PROJECT', {}, '')).toBeUndefined();
    expect(() => agreedValue('project', 'other', 'FURNISH_PROJECT', FROM_TERRAFORM, 'prod.json')).toThrow('--project "other" contradicts FURNISH_PROJECT="acme-prod" in prod.json');
  });
});

describe('furnish install --vars', () => {
  const dir = mkdtempSync(join(tmpdir(), 'furnish-vars-'));
  const file = join(dir, 'prod.json');
  writeFileSync(file, JSON.stringify(FROM_TERRAFORM));
  const cli = async (args: string[], stdin = '') => {
    let stderr = '';
    const code = await runCli(COMMANDS, ['install', ...args], { stdout: () => {}, stderr: (t) => (stderr += t), env: {}, readStdin: () => stdin });
    return { code, stderr };
  };

  it('needs no --url, --cluster nor --project when the file gives them (it gets as far as the cluster)', async () => {
    for (const args of [['--vars', file], ['--vars', '-']]) {
      const r = await cli([...args, '--relay-image', DIGEST, '--kubeconfig', join(dir, 'no-kubeconfig')], JSON.stringify(FROM_TERRAFORM));
      // The flags are fine; the cluster cannot be reached: a failure (1), not a usage error (2).
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('--kubeconfig/--context');
    }
  });

  it('refuses a flag that contradicts the file', async () => {
    const r = await cli(['--vars', file, '--cluster', 'staging', '--relay-image', DIGEST, '--kubeconfig', join(dir, 'no-kubeconfig')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--cluster "staging" contradicts FURNISH_CLUSTER_ID="prod" in ${file}`);
  });

  it('refuses a --ca-bundle that contradicts the file\'s before touching the cluster, as webhooks does', async () => {
    const withBundle = join(dir, 'ca.json');
    writeFileSync(withBundle, JSON.stringify({ ...FROM_TERRAFORM, FURNISH_CA_BUNDLE: Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64') }));
    const pem = join(dir, 'other.pem');
    writeFileSync(pem, '-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n');
    const r = await cli(['--vars', withBundle, '--ca-bundle', pem, '--relay-image', DIGEST, '--kubeconfig', join(dir, 'no-kubeconfig')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`contradicts FURNISH_CA_BUNDLE=(PEM sha256:`);
    expect(r.stderr).not.toContain('--kubeconfig/--context');
  });

  it('names a file it cannot read', async () => {
    const r = await cli(['--vars', join(dir, 'missing.json'), '--relay-image', DIGEST]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`--vars ${join(dir, 'missing.json')}: ENOENT`);
  });
});

describe('furnish webhooks --vars', () => {
  const dir = mkdtempSync(join(tmpdir(), 'furnish-webhook-vars-'));
  const write = (name: string, vars: Record<string, string>) => {
    writeFileSync(join(dir, name), JSON.stringify(vars));
    return join(dir, name);
  };
  const file = write('prod.json', FROM_TERRAFORM);
  const credential = 'k'.repeat(48);
  const cli = async (args: string[], stdin = '') => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(COMMANDS, ['webhooks', ...args], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), env: { CRED: credential }, readStdin: () => stdin });
    const clientConfigs = code === 0 ? parseAllDocuments(stdout).flatMap((d) => (d.toJS() as { webhooks: { clientConfig: { url: string; caBundle?: string } }[] }).webhooks.map((w) => w.clientConfig)) : [];
    return { code, stderr, clientConfigs };
  };

  it('takes the functions URL and the cluster id from the file, as install does', async () => {
    for (const args of [['--vars', file], ['--vars', '-']]) {
      const r = await cli([...args, '--credential-env', 'CRED'], JSON.stringify(FROM_TERRAFORM));
      expect(r.code).toBe(0);
      expect(r.clientConfigs.length).toBeGreaterThan(0);
      for (const c of r.clientConfigs) expect(c.url).toMatch(new RegExp(`^${FROM_TERRAFORM.FURNISH_FUNCTIONS_URL}/[a-z-]+/c/prod/${credential}$`));
      expect(r.clientConfigs.every((c) => c.caBundle === undefined)).toBe(true);
    }
  });

  it('takes the path credential from the file (install_vars holds it: nothing copied by hand); --credential-env must agree, and neither is ever shown', async () => {
    const withCredential = write('cred.json', { ...FROM_TERRAFORM, FURNISH_PATH_CREDENTIAL: credential });
    const r = await cli(['--vars', withCredential]);
    expect(r.code).toBe(0);
    for (const c of r.clientConfigs) expect(c.url).toMatch(new RegExp(`/c/prod/${credential}$`));
    expect((await cli(['--vars', withCredential, '--credential-env', 'CRED'])).code).toBe(0);
    const other = write('other.json', { ...FROM_TERRAFORM, FURNISH_PATH_CREDENTIAL: 'o'.repeat(48) });
    const refused = await cli(['--vars', other, '--credential-env', 'CRED']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--credential-env: CRED differs from FURNISH_PATH_CREDENTIAL in --vars ${other} (neither is shown: both are secrets)`);
    expect(refused.stderr).not.toMatch(/kkkk|oooo/);
    const bad = await cli(['--vars', write('bad.json', { ...FROM_TERRAFORM, FURNISH_PATH_CREDENTIAL: 'short-secret' })]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('FURNISH_PATH_CREDENTIAL must be 32 to 256 characters');
    expect(bad.stderr).not.toContain('short-secret');
  });

  it('refuses a functions URL with a query, a fragment or user information: the path credential would follow it into kube-apiserver\'s error', async () => {
    for (const url of ['https://f.example/base?', 'https://f.example/base?x=1', 'https://f.example/base#x', 'https://u:p@f.example']) {
      const r = await cli(['--vars', write('cred-url.json', { ...FROM_TERRAFORM, FURNISH_FUNCTIONS_URL: url, FURNISH_PATH_CREDENTIAL: credential })]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--url: must be the functions\' base URL, without a query (?), a fragment (#) or user information (@)');
      expect(r.stderr).not.toContain(credential);
    }
  });

  it('takes the file\'s CA bundle unless --ca-bundle gives one', async () => {
    const bundle = Buffer.from('-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n').toString('base64');
    const r = await cli(['--vars', write('ca.json', { ...FROM_TERRAFORM, FURNISH_CA_BUNDLE: bundle })]);
    expect(r.code).toBe(0);
    expect(new Set(r.clientConfigs.map((c) => c.caBundle))).toEqual(new Set([bundle]));
  });

  it('refuses a --ca-bundle that contradicts the file\'s, but takes one the same PEM or given where Terraform left it empty', async () => {
    const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const bundle = Buffer.from(pem).toString('base64');
    const withBundle = write('ca.json', { ...FROM_TERRAFORM, FURNISH_CA_BUNDLE: bundle });
    const pemFile = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const other = pemFile('other.pem', pem.replace('MIIB', 'MIIC'));
    const contradicted = await cli(['--vars', withBundle, '--ca-bundle', other]);
    expect(contradicted.code).toBe(2);
    expect(contradicted.stderr).toMatch(new RegExp(`--ca-bundle \\(PEM sha256:[0-9a-f]{12}\\) contradicts FURNISH_CA_BUNDLE=\\(PEM sha256:[0-9a-f]{12}\\) in ${withBundle}: drop the flag`));
    // The same certificate, with CRLF line ends and no final newline, is no contradiction.
    const same = await cli(['--vars', withBundle, '--ca-bundle', pemFile('same.pem', pem.trim().replace(/\n/g, '\r\n'))]);
    expect(same.code).toBe(0);
    expect(same.clientConfigs.length).toBeGreaterThan(0);
    // Terraform's install_vars has an empty bundle (a public CA): the flag fills it.
    const filled = await cli(['--vars', file, '--ca-bundle', other]);
    expect(filled.code).toBe(0);
    expect(new Set(filled.clientConfigs.map((c) => c.caBundle))).toEqual(new Set([Buffer.from(pem.replace('MIIB', 'MIIC')).toString('base64')]));
  });

  it('refuses a flag that contradicts the file, and a file install would refuse', async () => {
    const contradicted = await cli(['--vars', file, '--url', 'https://elsewhere.example.com']);
    expect(contradicted.code).toBe(2);
    expect(contradicted.stderr).toContain(`--url "https://elsewhere.example.com" contradicts FURNISH_FUNCTIONS_URL="${FROM_TERRAFORM.FURNISH_FUNCTIONS_URL}" in ${file}`);
    const empty = await cli(['--vars', write('empty.json', { ...FROM_TERRAFORM, FURNISH_TOPIC_TEMPLATES: '' })]);
    // The file's content, not the command line, is wrong: a failure.
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('FURNISH_TOPIC_TEMPLATES: is empty');
  });

  it('still needs --url without a file', async () => {
    const r = await cli([]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('missing --url');
  });
});

// Issue 29: the in-tree policies name the principals the webhooks name; on GKE Terraform's
// FURNISH_POLICY_SETTINGS carries them (the reconciler is its Google account).
describe('policy settings from --vars (FURNISH_POLICY_SETTINGS) and --config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'furnish-policy-settings-'));
  const vars = (settings: string) => ({ vars: { FURNISH_POLICY_SETTINGS: settings }, where: 'vars.json' });
  const GKE = JSON.stringify({ guard: { reconciler: ['r@p.iam.gserviceaccount.com'] }, trustedCreators: ['r@p.iam.gserviceaccount.com'], organizations: { enabled: true } });

  it('reads the webhooks\' settings from the vars file, defaults filled in as the functions fill them', () => {
    const settings = policySettingsOption({}, vars(GKE));
    expect(settings.guard.reconciler).toEqual(['r@p.iam.gserviceaccount.com']);
    expect(settings.trustedCreators).toEqual(['r@p.iam.gserviceaccount.com']);
    expect(settings.organizations).toMatchObject({ enabled: true });
    expect(settings.systemNamespaces).toEqual(defaultPolicySettings().systemNamespaces);
    expect(policySettingsOption({})).toEqual(defaultPolicySettings());
  });

  it('refuses a --config that says otherwise, and names what is wrong in the variable', () => {
    const file = join(dir, 'other.yaml');
    writeFileSync(file, 'guard: { reconciler: [someone-else] }\n');
    expect(() => policySettingsOption({ config: file }, vars(GKE))).toThrow(`--config ${file} contradicts FURNISH_POLICY_SETTINGS in --vars vars.json`);
    const same = join(dir, 'same.yaml');
    writeFileSync(same, GKE);
    expect(policySettingsOption({ config: same }, vars(GKE)).guard.reconciler).toEqual(['r@p.iam.gserviceaccount.com']);
    expect(() => policySettingsOption({}, vars('{'))).toThrow('--vars vars.json: FURNISH_POLICY_SETTINGS: not JSON');
    expect(() => policySettingsOption({}, vars('{"gaurd":{}}'))).toThrow(/FURNISH_POLICY_SETTINGS: gaurd.*is not a policy setting/);
  });
});
