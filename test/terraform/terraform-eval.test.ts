// The offline evaluator behind test/terraform/deployment.test.ts: it computes what `terraform plan`
// would know, and refuses (never guesses) what only apply knows or what it cannot evaluate.
import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerraformModel, Unknown, unknownsIn } from '../../scripts/terraform-eval.ts';

const MODULE = `
variable "prefix" {
  description = "p"
  type        = string
  default     = "furnish"
}
variable "clusters" {
  description = "c"
  type        = map(object({ api = optional(string) }))
}
locals {
  kinds  = { "b-fn" = "beta", "a-fn" = "alpha" }
  topics = toset([for fn, t in local.kinds : t if fn != "none"])
  urls   = { for id, c in var.clusters : id => c.api == null ? "none" : "https://\${c.api}/\${id}" }
  maybe  = try(var.clusters["missing"].api, "fallback")
  first  = values(local.kinds)[0]
}
resource "google_service_account" "relay" {
  project    = "proj"
  account_id = "\${var.prefix}-relay"
}
resource "google_pubsub_topic" "t" {
  for_each = local.topics
  project  = "proj"
  name     = "\${var.prefix}-\${each.key}"
}
resource "google_thing" "x" {
  name  = data.google_project.p.number
  other = "\${google_pubsub_topic.t["alpha"].id}|\${google_service_account.relay.email}"
}
output "names" {
  description = "n"
  value       = { for k, t in google_pubsub_topic.t : k => t.name }
}
output "bad" {
  description = "b"
  value       = formatlist("%s", ["a"])
}
output "unknown" {
  description = "u"
  value       = "\${google_thing.x.name}-x"
}
`;

async function model(variables: Record<string, unknown>): Promise<TerraformModel> {
  const dir = mkdtempSync(join(tmpdir(), 'furnish-tf-eval-'));
  writeFileSync(join(dir, 'main.tf'), MODULE);
  return TerraformModel.load(dir, variables);
}

describe('TerraformModel', () => {
  it('evaluates for expressions, conditionals, try, indexes and resources for the variables given', async () => {
    const m = await model({ prefix: 'acme', clusters: { prod: { api: 'k.example' }, dev: { api: null } } });
    expect(await m.local('topics')).toEqual(['alpha', 'beta']);
    expect(await m.local('urls')).toEqual({ prod: 'https://k.example/prod', dev: 'none' });
    expect(await m.local('maybe')).toBe('fallback');
    expect(await m.local('first')).toBe('alpha');
    expect(await m.output('names')).toEqual({ alpha: 'acme-alpha', beta: 'acme-beta' });
    expect(await m.attribute('google_thing', 'x', '', ['other'])).toBe('projects/proj/topics/acme-alpha|acme-relay@proj.iam.gserviceaccount.com');
  });

  it('takes a variable\'s default, and asks for one without', async () => {
    expect(await (await model({ clusters: {} })).output('names')).toEqual({ alpha: 'furnish-alpha', beta: 'furnish-beta' });
    await expect((await model({})).local('urls')).rejects.toThrow('variable "clusters" has no default: give it');
  });

  it('refuses to use what only apply knows, and what it cannot evaluate', async () => {
    const m = await model({ clusters: {} });
    await expect(m.output('unknown')).rejects.toThrow(/data\.google_project\.p is read by the provider/);
    await expect(m.output('bad')).rejects.toThrow('function formatlist() is not supported by this evaluator');
    await expect(m.attribute('google_pubsub_topic', 't', 'gamma', ['name'])).rejects.toThrow('google_pubsub_topic.t["gamma"] does not exist');
    expect(unknownsIn({ a: [1, new Unknown('later')] })).toEqual(['a[1]: later']);
  });
});
