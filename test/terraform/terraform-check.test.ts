// The offline Terraform check CI runs: the project's own module passes, and each kind of mistake
// `terraform validate` would catch without providers is reported with its file.
import { describe, expect, it } from '@jest/globals';
import { chmodSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkTerraform, formatProblems } from '../../scripts/terraform-check.ts';

const root = join(import.meta.dirname, '..', '..');
const builtFunctions = readdirSync(join(root, 'functions'));

const PINNED = `terraform {\n  required_providers {\n    google = { source = "hashicorp/google", version = ">= 6.0" }\n  }\n}\n`;

async function check(files: Record<string, string>, built: string[] = ['a']): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'furnish-tf-'));
  for (const [name, text] of Object.entries({ 'versions.tf': PINNED, ...files })) writeFileSync(join(dir, name), text);
  return (await checkTerraform(dir, built)).map((p) => `${p.file}: ${p.message}`);
}

describe('terraform check', () => {
  it('finds nothing wrong in the project module', async () => {
    expect(await checkTerraform(join(root, 'terraform'), builtFunctions)).toEqual([]);
  });

  it('accepts a small correct module', async () => {
    const problems = await check({
      'main.tf': `variable "project" {\n  description = "p"\n  type = map(object({ a = string }))\n}\nlocals {\n  webhooks = ["a"]\n  url = "https://\${var.project}.example"\n}\nresource "google_pubsub_topic" "t" {\n  name = upper(local.url)\n}\noutput "topic" {\n  description = "the topic"\n  value = google_pubsub_topic.t.name\n}\n`,
    });
    expect(problems).toEqual([]);
  });

  it('reports undeclared variables, locals and resources, and unknown functions', async () => {
    const problems = await check({
      'main.tf': `resource "google_pubsub_topic" "t" {\n  name = "\${var.nope}-\${local.missing}"\n  labels = templatefil("x", {})\n  project = google_project.p.id\n}\n`,
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'main.tf: variable "nope" is not declared (in "var.nope")',
        'main.tf: local "missing" is not declared (in "local.missing")',
        'main.tf: resource "google_project.p" is not declared (in "google_project.p.id")',
        'main.tf: unknown function "templatefil()"',
      ]),
    );
  });

  it('looks inside the body of a for expression, indexes aside', async () => {
    const problems = await check({
      'main.tf': `variable "clusters" {\n  description = "c"\n  type = map(string)\n}\nresource "google_pubsub_topic" "t" {\n  for_each = var.clusters\n  name = "x"\n}\nlocals {\n  config = yamlencode([for id, c in var.clusters : { id = id, topic = google_pubsub_topic.t[id].name, key = random_password.p[id].result, x = var.missing[id] }])\n}\noutput "config" {\n  description = "c"\n  value = local.config\n}\n`,
    });
    expect(problems.sort()).toEqual([
      'main.tf: resource "random_password.p" is not declared (in "random_password.p")',
      'main.tf: variable "missing" is not declared (in "var.missing")',
    ]);
  });

  it('reports unused and undocumented variables, undocumented outputs and unpinned providers', async () => {
    const problems = await check({
      'main.tf': `variable "unused" {\n  type = string\n}\nresource "kubernetes_namespace" "n" {}\noutput "o" {\n  value = 1\n}\n`,
    });
    expect(problems).toEqual(
      expect.arrayContaining([
        'main.tf: variable "unused" is declared but never used',
        'main.tf: variable "unused" has no description',
        'main.tf: output "o" has no description',
        'main.tf: "kubernetes_namespace" needs provider "kubernetes", which required_providers does not pin',
      ]),
    );
  });

  it('reports a deployed function that npm run build does not build', async () => {
    const problems = await check({ 'locals.tf': `locals {\n  webhooks = ["a", "b"]\n  reconcilers = { "c" = "topic" }\n}\n` }, ['a']);
    expect(problems).toEqual([
      'locals.tf: function "b" is deployed but functions/b/index.ts does not exist',
      'locals.tf: function "c" is deployed but functions/c/index.ts does not exist',
    ]);
  });

  it('reports a syntax error with its file and position', async () => {
    const problems = await check({ 'broken.tf': 'resource "a" "b" {\n  x = \n}\n' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^broken\.tf: .*broken\.tf:2,\d+/);
  });

  it('formatting: the files `terraform fmt -check` names are problems; without a binary, nothing is claimed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'furnish-tf-fmt-'));
    // A stand-in with terraform's contract: the unformatted files on stdout, exit 3 (the real one runs in `npm run check:terraform`).
    const fake = (stdout: string, status: number) => {
      const bin = join(dir, `terraform-${status}`);
      writeFileSync(bin, `#!/bin/sh\n[ "$1 $2 $3" = "fmt -check -recursive" ] || exit 9\nprintf '${stdout}'\nexit ${status}\n`);
      chmodSync(bin, 0o755);
      return bin;
    };
    expect(formatProblems(dir, fake('main.tf\\nlocals.tf\\n', 3))?.map((p) => p.file)).toEqual(['main.tf', 'locals.tf']);
    expect(formatProblems(dir, fake('', 0))).toEqual([]);
    expect(formatProblems(dir, fake('', 1))?.[0]?.message).toMatch(/^terraform fmt -check failed/);
    expect(formatProblems(dir, join(dir, 'no-such-terraform'))).toBeUndefined();
  });
});
