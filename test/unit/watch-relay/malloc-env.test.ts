// The relay container's malloc settings (functions/watch-relay/lib/malloc-env.ts) have one home:
// the Deployment carries exactly them, so the population bench measures the deployed process.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { RELAY_MALLOC_ENV } from '../../../functions/watch-relay/lib/malloc-env.ts';

const root = join(import.meta.dirname, '..', '..', '..');

describe("the relay's malloc settings", () => {
  it("are in the relay container's environment, as malloc-env.ts has them", () => {
    const deployment = parse(readFileSync(join(root, 'infra/relay/deployment.yaml'), 'utf8')) as { spec: { template: { spec: { containers: { name: string; env: { name: string; value: string }[] }[] } } } };
    const env = deployment.spec.template.spec.containers.find((c) => c.name === 'relay')!.env;
    const malloc = Object.fromEntries(env.filter((e) => e.name.startsWith('MALLOC_')).map((e) => [e.name, e.value]));
    expect(malloc).toEqual(RELAY_MALLOC_ENV);
  });
});
