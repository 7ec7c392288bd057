// The settings table: one reader with one error naming the setting, and docs/reference/settings.md's
// table generated from it (this test fails while they differ: `npm run settings:docs`).
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, readSetting, withSettingsTable, SETTINGS, type Setting } from '../../../shared/config/settings.ts';
import { defaultPolicySettings, DEFAULT_SYSTEM_PRINCIPALS } from '../../../shared/config/types.ts';
import { DEFAULT_KUBE_TIMEOUT_MS } from '../../../shared/kube/http.ts';
import { DEFAULT_DRIFT_RESOURCES } from '../../../functions/watch-relay/lib/drift-watch.ts';
import { relayConfig } from '../../../functions/watch-relay/lib/config.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const TABLE = Object.values(SETTINGS) as Setting[];
const SETTINGS_DOC = join(ROOT, 'docs', 'reference', 'settings.md');

function thrown(f: () => unknown): ConfigError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return e as ConfigError;
  }
  throw new Error('expected a ConfigError');
}

/** Every file under `dir` (recursively) whose name ends in one of `exts`. */
function filesUnder(dir: string, exts: readonly string[]): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name.startsWith('.')) return [];
    if (statSync(path).isDirectory()) return filesUnder(path, exts);
    return exts.some((e) => name.endsWith(e)) ? [path] : [];
  });
}

/** FURNISH_* names that are not settings: a constant, the test harness's variables, placeholders of infra/ templates. */
const NOT_SETTINGS = new Set(['FURNISH_INITIALIZER', 'FURNISH_TEST_KUBECONFIG', 'FURNISH_TEST_AUDIT_LOG', 'FURNISH_FUNCTIONS_URL', 'FURNISH_FUNCTIONS_HOST', 'FURNISH_CA_BUNDLE', 'FURNISH_WEBHOOK_CREDENTIAL_PATH', 'FURNISH_WEBHOOK_TOKEN', 'FURNISH_RELAY_IMAGE',
  // Placeholders of the manifests `furnish install` fills in, what else install_vars hands it, and a variable the install docs' example names.
  'FURNISH_PROJECT', 'FURNISH_RELAY_SERVICE_ACCOUNT', 'FURNISH_RECONCILER_USER', 'FURNISH_WEBHOOK_USER', 'FURNISH_X', 'FURNISH_PATH_CREDENTIAL', 'FURNISH_POLICY_SETTINGS']);

describe('the settings table', () => {
  it('docs/reference/settings.md lists exactly the settings of the table (npm run settings:docs regenerates it)', () => {
    const doc = readFileSync(SETTINGS_DOC, 'utf8');
    expect(doc).toBe(withSettingsTable(doc));
    for (const s of TABLE) expect(doc).toContain(`| ${s.env ? `\`${s.env}\`` : ''} | ${s.file ? `\`${s.file}\`` : ''} |`);
  });

  it('a settings reference whose list lacks a setting, or has one too many, is told apart', () => {
    const doc = readFileSync(SETTINGS_DOC, 'utf8');
    expect(withSettingsTable(doc.replace(/^\| `FURNISH_KUBE_QPS` .*\n/m, ''))).toBe(doc);
    expect(doc.replace(/^\| `FURNISH_KUBE_QPS` .*\n/m, '')).not.toBe(withSettingsTable(doc));
    expect(() => withSettingsTable('# no markers')).toThrow(/markers/);
  });

  it('every FURNISH_ variable the code, manifests, Terraform and docs name is in the table', () => {
    const known = new Set(TABLE.flatMap((s) => [s.env, s.formerly]).filter((v) => v !== undefined));
    const files = ['shared', 'functions', 'scripts', 'bin', 'infra', 'terraform', 'docs'].flatMap((d) => filesUnder(join(ROOT, d), ['.ts', '.js', '.yaml', '.tf', '.md']));
    const unknown = new Set<string>();
    for (const file of [...files, join(ROOT, 'README.md')]) {
      for (const [name] of readFileSync(file, 'utf8').matchAll(/\bFURNISH_[A-Z0-9_]*[A-Z0-9]\b/g)) {
        if (!known.has(name) && !NOT_SETTINGS.has(name)) unknown.add(`${name} (${file.slice(ROOT.length + 1)})`);
      }
    }
    expect([...unknown]).toEqual([]);
  });

  it('one reader: no code in shared/ or functions/ reads a FURNISH_ variable but through the table', () => {
    const files = ['shared', 'functions'].flatMap((d) => filesUnder(join(ROOT, d), ['.ts'])).filter((f) => !f.endsWith(join('config', 'settings.ts')));
    const direct = files.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/env(\.|\[['"])FURNISH_[A-Z0-9_]+/g)].map((m) => `${f.slice(ROOT.length + 1)}: ${m[0]}`));
    expect(direct).toEqual([]);
  });

  it('variables and file paths are unique; every entry is described', () => {
    const envs = TABLE.map((s) => s.env).filter(Boolean);
    const paths = TABLE.map((s) => s.file).filter(Boolean);
    expect(new Set(envs).size).toBe(envs.length);
    expect(new Set(paths).size).toBe(paths.length);
    for (const s of TABLE) {
      expect(s.env ?? s.file).toBeDefined();
      expect(s.description.length).toBeGreaterThan(10);
    }
  });

  it("defaults written as text in the table are the code's defaults", () => {
    expect(SETTINGS.driftResources.defaultText).toBe(`\`${DEFAULT_DRIFT_RESOURCES.join(',')}\``);
    expect(relayConfig({}).driftResources).toEqual(DEFAULT_DRIFT_RESOURCES);
    const policy = defaultPolicySettings('<furnishNamespace>');
    expect(SETTINGS.guardReconciler.defaultText).toBe(`\`${policy.guard.reconciler.join(',')}\``);
    expect(SETTINGS.trustedCreators.defaultText).toBe(`\`${policy.trustedCreators.join(',')}\``);
    expect(DEFAULT_SYSTEM_PRINCIPALS).toEqual(expect.arrayContaining(['system:serviceaccount:kube-system:replicaset-controller', 'system:kube-scheduler', 'group:system:nodes']));
    expect(SETTINGS.apiTimeoutMs.default).toBe(DEFAULT_KUBE_TIMEOUT_MS);
  });
});

describe('readSetting', () => {
  it('gives the default when unset (or empty for a number), the parsed value otherwise', () => {
    expect(readSetting({}, 'kubeQps')).toBe(5000);
    expect(readSetting({ FURNISH_KUBE_QPS: '' }, 'kubeQps')).toBe(5000);
    expect(readSetting({}, 'logLevel')).toBe('INFO');
    expect(() => readSetting({ FURNISH_LOG_LEVEL: 'LOUD' }, 'logLevel')).toThrow(/FURNISH_LOG_LEVEL/);
    // The fixed client budget is gone: its burst is refused, naming the ceiling that replaced it, not ignored.
    expect(() => readSetting({ FURNISH_KUBE_BURST: '400' }, 'kubeMaxInflight')).toThrow(/FURNISH_KUBE_BURST: was renamed FURNISH_KUBE_MAX_INFLIGHT/);
    expect(readSetting({ FURNISH_KUBE_QPS: '50' }, 'kubeQps')).toBe(50);
    expect(readSetting({ FURNISH_SYSTEM_NAMESPACES: ' a, b ,,' }, 'systemNamespaces')).toEqual(['a', 'b']);
    expect(readSetting({ FURNISH_READY_DESPITE_FAILURES: 'true' }, 'readyDespiteFailures')).toBe(true);
    expect(readSetting({ FURNISH_TOPIC_BILLING: '' }, 'topicBilling')).toBe('');
    // A topic is never empty: envsubst empties an unset variable, and the default topic may not exist.
    expect(readSetting({}, 'topicTemplates')).toBe('furnish-templates');
    expect(() => readSetting({ FURNISH_TOPIC_TEMPLATES: '' }, 'topicTemplates')).toThrow('FURNISH_TOPIC_TEMPLATES: is empty, and no topic has an empty name');
    expect(readSetting({}, 'pushServiceAccount')).toBeUndefined();
  });

  it('computes a default from the rest of the environment', () => {
    expect(readSetting({}, 'bus')).toBe('memory');
    expect(readSetting({ GOOGLE_CLOUD_PROJECT: 'p' }, 'bus')).toBe('pubsub');
    expect(readSetting({ GOOGLE_CLOUD_PROJECT: 'p' }, 'pubsubProject')).toBe('p');
    expect(readSetting({ PUBSUB_PROJECT_ID: 'q' }, 'pubsubProject')).toBe('q');
    expect(readSetting({ FURNISH_PUBSUB_PROJECT: 'r', GOOGLE_CLOUD_PROJECT: 'p' }, 'pubsubProject')).toBe('r');
  });

  it('one error type naming the variable and what is wrong', () => {
    const e = thrown(() => readSetting({ FURNISH_KUBE_QPS: 'fast' }, 'kubeQps'));
    expect(e.setting).toBe('FURNISH_KUBE_QPS');
    expect(e.message).toBe('FURNISH_KUBE_QPS: must be a number ≥ 1, got "fast"');
    expect(thrown(() => readSetting({ FURNISH_READY_DESPITE_FAILURES: 'yes' }, 'readyDespiteFailures')).message).toBe('FURNISH_READY_DESPITE_FAILURES: must be true or false, got "yes"');
    expect(thrown(() => readSetting({ FURNISH_BUS: 'kafka' }, 'bus')).message).toBe('FURNISH_BUS: must be memory or pubsub, got "kafka"');
    expect(thrown(() => readSetting({ FURNISH_CLUSTERS: '{' }, 'clusters')).message).toMatch(/^FURNISH_CLUSTERS: not valid JSON/);
    expect(thrown(() => readSetting({ FURNISH_CLUSTER_ID: 'Prod_1' }, 'clusterId')).message).toBe('FURNISH_CLUSTER_ID: must be a DNS label (lower-case letters, digits, \'-\'), got "Prod_1"');
  });

  it('one cluster-id variable: the former FURNISH_CLUSTER is refused, naming its new name', () => {
    expect(readSetting({ FURNISH_CLUSTER_ID: 'prod-eu' }, 'clusterId')).toBe('prod-eu');
    expect(relayConfig({ FURNISH_CLUSTER_ID: 'prod-eu' }).cluster).toBe('prod-eu');
    expect(thrown(() => relayConfig({ FURNISH_CLUSTER: 'prod-eu' })).message).toBe('FURNISH_CLUSTER: was renamed FURNISH_CLUSTER_ID: set that instead');
    expect(readSetting({ FURNISH_CLUSTER: 'old', FURNISH_CLUSTER_ID: 'new' }, 'clusterId')).toBe('new');
  });
});
