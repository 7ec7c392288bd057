// `node test/support/admission-config.ts DIR`: writes an AdmissionConfiguration for a real test API
// server (start.sh's ADMISSION_CONFIG_FILE, see .ci/run) and prints its path. The API server then
// presents, to every webhook (`*`), the bearer JWT the test suites' webhook functions accept
// (test/support/fixtures.ts: test cluster, test secret, test public URL), as kube-sim does with
// its admissionKubeconfig option, so the admission suites can run against it too.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { mintToken } from './fixtures.ts';

export async function writeAdmissionConfig(dir: string): Promise<string> {
  const infra = join(import.meta.dirname, '..', '..', 'infra', 'webhooks', 'apiserver');
  const kubeconfigPath = join(dir, 'webhook-kubeconfig.yaml');
  const kubeconfig = readFileSync(join(infra, 'webhook-kubeconfig.yaml'), 'utf8')
    .replaceAll('${FURNISH_FUNCTIONS_HOST}', '*')
    .replaceAll('${FURNISH_WEBHOOK_TOKEN}', await mintToken());
  writeFileSync(kubeconfigPath, kubeconfig, { mode: 0o600 });
  const config = parse(readFileSync(join(infra, 'admission-config.yaml'), 'utf8')) as { plugins: Array<{ configuration: { kubeConfigFile: string } }> };
  for (const p of config.plugins) p.configuration.kubeConfigFile = kubeconfigPath;
  const path = join(dir, 'admission-config.yaml');
  writeFileSync(path, stringify(config));
  return path;
}

if (process.argv[1] === import.meta.filename) {
  const dir = process.argv[2];
  if (!dir) {
    console.error('usage: node test/support/admission-config.ts DIR');
    process.exit(2);
  }
  console.log(await writeAdmissionConfig(dir));
}
