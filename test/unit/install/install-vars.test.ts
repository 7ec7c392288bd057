// `furnish install --vars`: one cluster's entry of Terraform's output install_vars is the one
// source of the relay's topics, project and identity; a malformed file or a flag that says
// otherwise is refused before any cluster is touched.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../../shared/cli/command.ts';
import { COMMANDS } from '../../../shared/cli/commands.ts';
import { agreedValue, defaultTopicVars, parseInstallVars, TOPIC_VARS } from '../../../shared/install/vars.ts';

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
    const { FURNISH_TOPIC_BILLING: _billing, ...rest }: Record<string, string> = FROM_TERRAFORM;
    expect(() => parseInstallVars(JSON.stringify({ ...rest, FURNISH_TOPIC_PENDING: '' }), 'prod.json')).toThrow('prod.json: lacks FURNISH_TOPIC_PENDING, FURNISH_TOPIC_BILLING: the relay would publish to topics Terraform did not create');
  });

  it('without a file, names the topics of Terraform\'s default prefix, the settings\' defaults', () => {
    expect(Object.values(defaultTopicVars()).sort()).toEqual(['furnish-billing', 'furnish-lnamespaces', 'furnish-namespaces', 'furnish-namespaces-pending', 'furnish-templates']);
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
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('--kubeconfig/--context');
    }
  });

  it('refuses a flag that contradicts the file', async () => {
    const r = await cli(['--vars', file, '--cluster', 'staging', '--relay-image', DIGEST, '--kubeconfig', join(dir, 'no-kubeconfig')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--cluster "staging" contradicts FURNISH_CLUSTER_ID="prod" in ${file}`);
  });

  it('names a file it cannot read', async () => {
    const r = await cli(['--vars', join(dir, 'missing.json'), '--relay-image', DIGEST]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`--vars ${join(dir, 'missing.json')}: ENOENT`);
  });
});
