// The offline evaluator behind test/terraform/deployment.test.ts: it computes what `terraform plan`
// would know, and refuses (never guesses) what only apply knows or what it cannot evaluate.
import { beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { TerraformModel, Unknown, unknownsIn, type Applied } from '../../scripts/terraform-eval.ts';

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

// yamlencode's expected outputs are Terraform's: the examples of its documentation
// (developer.hashicorp.com/terraform/language/functions/yamlencode), and every other one the bytes
// `terraform console` (1.11.4) printed for the same expression.
const YAML_MODULE = String.raw`
variable "pem" {
  description = "p"
  type        = string
}
locals {
  doc_flat    = yamlencode({ "a" = "b", "c" = "d" })
  doc_list    = yamlencode({ "foo" = [1, 2, 3], "bar" = "baz" })
  doc_nested  = yamlencode({ "foo" = [1, { "a" = "b", "c" = "d" }, 3], "bar" = "baz" })
  lone_bool   = yamlencode(true)
  lone_null   = yamlencode(null)
  lone_string = yamlencode("hello")
  empty       = yamlencode({ list = [], map = {}, text = "" })
  numbers     = yamlencode({ big = 1e21, small = 0.0000001, half = 0.5 })
  order       = yamlencode({ "b" = 1, "10" = 2, "9" = 3, "a" = { "z" = true, "y" = false } })
  escapes     = yamlencode({ quote = "say \"hi\"\\", tab = "a\tb", tabbed = "a\tb\nc", dollar = "$${'$'}{x}" })
  blocks      = yamlencode({ pem = var.pem, clipped = "a\nb", kept = "a\n\n", spaced = "a \nb", items = [{ pem = var.pem }] })
  kept_last   = yamlencode({ a = "x\n", z = "y\n\n" })
  kept_root   = yamlencode("y\n\n")
  lone_break  = yamlencode("\n")
  leading     = yamlencode({ newline = "\nx", newline_kept = "\nx\n\n", space = " x\ny", space_clip = " x\ny\n", lone = "\n" })
  unprintable = yamlencode(["\u0000\u0007\u0008\t\u000b\u000c\r\u001b\u007f\u0086\u009f\u00a0\ufffe\uffff\ue000\U0001F600", "\u00a0\n", "a\u2028b\nc", "\u2028x\ny", "a\u2029 b\nc"])
  separators  = yamlencode({ nel = "a\u0085b", ls = "a\u2028b", ps = "a\u2029b", nel_lines = "x\u0085y\nz" })
  unknown     = yamlencode({ n = data.google_project.p.number })
  generated   = yamlencode({ key = random_password.key["a"].result })
}
resource "random_password" "key" {
  for_each = toset(["a"])
  length   = 8
  special  = false
}
`;

async function model(variables: Record<string, unknown>, module = MODULE, applied: Applied = {}): Promise<TerraformModel> {
  const dir = mkdtempSync(join(tmpdir(), 'furnish-tf-eval-'));
  writeFileSync(join(dir, 'main.tf'), module);
  return TerraformModel.load(dir, variables, applied);
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

  describe('yamlencode, byte for byte as Terraform writes it', () => {
    const PEM = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    let m: TerraformModel;
    const yaml = async (name: string) => m.local(name);
    beforeAll(async () => {
      m = await model({ pem: PEM }, YAML_MODULE);
    });

    it('writes the documentation\'s examples as documented: block style, keys sorted, keys and strings double-quoted, sequences in a mapping not indented', async () => {
      expect(await yaml('doc_flat')).toBe('"a": "b"\n"c": "d"\n');
      expect(await yaml('doc_list')).toBe('"bar": "baz"\n"foo":\n- 1\n- 2\n- 3\n');
      expect(await yaml('doc_nested')).toBe('"bar": "baz"\n"foo":\n- 1\n- "a": "b"\n  "c": "d"\n- 3\n');
    });

    it('writes scalars, empty collections and numbers as go-cty-yaml does', async () => {
      // libyaml ends a document that is one plain scalar with the document end marker.
      expect(await yaml('lone_bool')).toBe('true\n...\n');
      expect(await yaml('lone_null')).toBe('null\n...\n');
      expect(await yaml('lone_string')).toBe('"hello"\n');
      expect(await yaml('empty')).toBe('"list": []\n"map": {}\n"text": ""\n');
      // Numbers in plain decimal (big.Float's 'f' format), never with an exponent.
      expect(await yaml('numbers')).toBe('"big": 1000000000000000000000\n"half": 0.5\n"small": 0.0000001\n');
      // Keys in lexical order, numeric-looking ones too (a JavaScript object would put "9" and "10" first).
      expect(await yaml('order')).toBe('"10": 2\n"9": 3\n"a":\n  "y": false\n  "z": true\n"b": 1\n');
      expect(await yaml('escapes')).toBe('"dollar": "${x}"\n"quote": "say \\"hi\\"\\\\"\n"tab": "a\\tb"\n"tabbed": "a\\tb\\nc"\n');
    });

    it('writes a multi-line string as a literal block with its chomping, unless a space ends a line', async () => {
      expect(await yaml('blocks')).toBe([
        '"clipped": |-', '  a', '  b',
        '"items":', '- "pem": |', '    -----BEGIN CERTIFICATE-----', '    MIIB', '    -----END CERTIFICATE-----',
        '"kept": |+', '  a', '',
        '"pem": |', '  -----BEGIN CERTIFICATE-----', '  MIIB', '  -----END CERTIFICATE-----',
        '"spaced": "a \\nb"', '',
      ].join('\n'));
      // A kept block last, even at the root, gets no document end marker (Terraform 1.11.4).
      expect(await yaml('kept_last')).toBe('"a": |\n  x\n"z": |+\n  y\n\n');
      expect(await yaml('kept_root')).toBe('|+\n  y\n\n');
    });

    it('gives a block whose first line starts with a space or is empty an indentation indicator', async () => {
      expect(await yaml('leading')).toBe([
        '"lone": |2+', '',
        '"newline": |2-', '', '  x',
        '"newline_kept": |2+', '', '  x', '',
        '"space": |2-', '   x', '  y',
        '"space_clip": |2', '   x', '  y', '',
      ].join('\n'));
      expect(await yaml('lone_break')).toBe('|2+\n\n');
      expect(parse(String(await yaml('leading')))).toEqual({ lone: '\n', newline: '\nx', newline_kept: '\nx\n\n', space: ' x\ny', space_clip: ' x\ny\n' });
    });

    it('escapes the Unicode line separators in double quotes, and double-quotes a multi-line string with NEL', async () => {
      expect(await yaml('separators')).toBe('"ls": "a\\Lb"\n"nel": "a\\Nb"\n"nel_lines": "x\\Ny\\nz"\n"ps": "a\\Pb"\n');
      expect(parse(String(await yaml('separators')))).toEqual({ ls: 'a\u2028b', nel: 'a\u0085b', nel_lines: 'x\u0085y\nz', ps: 'a\u2029b' });
    });

    it('escapes what go-yaml cannot print as it does, and indents a block after U+2028 and U+2029 as after a break', async () => {
      // The bytes of Terraform 1.11.4's output: U+2028 and U+2029 end a line in a block, so it indents after them.
      expect(await yaml('unprintable')).toBe([
        '- "\\0\\a\\b\\t\\v\\f\\r\\e\\x7F\\x86\\x9F\u00a0\\uFFFE\\uFFFF\ue000\\U0001F600"',
        '- |', '  \u00a0',
        '- |-', '  a\u2028  b', '  c',
        '- |2-', '\u2028  x', '  y',
        '- |-', '  a\u2029   b', '  c', '',
      ].join('\n'));
      // (A YAML 1.2 parser, where U+2028 is no break, cannot read the fourth item back, as from Terraform.)
      expect(parse(String(await yaml('unprintable')).slice(2).split('\n')[0] ?? '')).toBe('\u0000\u0007\u0008\t\u000b\u000c\r\u001b\u007f\u0086\u009f\u00a0\ufffe\uffff\ue000\u{1F600}');
    });

    it('parses back to the value it encoded, and refuses what only apply knows', async () => {
      expect(parse(String(await yaml('blocks')))).toEqual({ clipped: 'a\nb', items: [{ pem: PEM }], kept: 'a\n\n', pem: PEM, spaced: 'a \nb' });
      await expect(yaml('unknown')).rejects.toThrow(/yamlencode: n: data\.google_project\.p is read by the provider/);
      await expect(yaml('generated')).rejects.toThrow('yamlencode: key: random_password.key["a"].result is generated by apply');
    });

    it('follows a value apply generates into what uses it, when the caller says what apply made', async () => {
      const applied = await model({ pem: PEM }, YAML_MODULE, { random_password: (a, address) => ({ result: `${address}/${String(a.length)}` }) });
      expect(await applied.local('generated')).toBe('"key": "random_password.key[\\"a\\"]/8"\n');
    });
  });
});
