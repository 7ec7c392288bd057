// The webhook functions are deployed as their memory was measured (issue 25, finding 11):
// test/bench/webhooks-memory.bench.ts sends WEBHOOK_CONCURRENCY reviews of the largest size at
// once to a process with WEBHOOK_NODE_FLAGS and checks the peak against 75 % of WEBHOOK_MEMORY_MIB;
// Terraform deploys every webhook with that memory, that concurrency and those flags.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { join } from 'node:path';
import { TerraformModel } from '../../scripts/terraform-eval.ts';
import { WEBHOOKS } from '../../shared/config/types.ts';
import { WEBHOOK_CONCURRENCY, WEBHOOK_MEMORY_MIB, WEBHOOK_NODE_FLAGS } from '../../shared/webhooks/memory-budget.ts';

const VARIABLES = {
  project_id: 'acme-platform',
  name_prefix: 'furnish',
  cluster_secrets: { prod: { kubeconfig_secret_id: 'acme-prod-kubeconfig', api: null } },
  relay_workload_identity_pools: ['acme-platform.svc.id.goog'],
};

describe('webhook functions, as measured', () => {
  let tf: TerraformModel;
  beforeAll(async () => {
    tf = await TerraformModel.load(join(import.meta.dirname, '..', '..', 'terraform'), VARIABLES);
  }, 60_000);

  const service = (fn: string, ...path: (string | number)[]) => tf.attribute('google_cloudfunctions2_function', 'fn', fn, ['service_config', 0, ...path]);

  it('every webhook gets the measured memory, concurrency and Node flags', async () => {
    for (const fn of WEBHOOKS) {
      expect({ fn, memory: await service(fn, 'available_memory') }).toEqual({ fn, memory: `${WEBHOOK_MEMORY_MIB}Mi` });
      expect({ fn, concurrency: await service(fn, 'max_instance_request_concurrency') }).toEqual({ fn, concurrency: WEBHOOK_CONCURRENCY });
      const env = (await service(fn, 'environment_variables')) as Record<string, string>;
      expect({ fn, flags: env.NODE_OPTIONS }).toEqual({ fn, flags: WEBHOOK_NODE_FLAGS.join(' ') });
    }
  });

  it('an operator may change the concurrency (after measuring again)', async () => {
    const custom = await TerraformModel.load(join(import.meta.dirname, '..', '..', 'terraform'), { ...VARIABLES, webhook: { min_instances: 1, max_instances: 20, memory: '256Mi', timeout: 10, concurrency: 8 } });
    expect(await custom.attribute('google_cloudfunctions2_function', 'fn', 'protect-objects', ['service_config', 0, 'max_instance_request_concurrency'])).toBe(8);
  }, 60_000);
});
