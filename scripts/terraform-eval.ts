// Evaluates values of terraform/ offline, for given variables, the way `terraform plan` would
// know them: enough of HCL's expression language (templates, for, conditionals, indexes, the
// collection functions terraform/ uses) over HashiCorp's own parser (@cdktn/hcl2json), so that
// tests can ask what a non-default name_prefix makes of the topics, the relay's identity and the
// functions' environment without a Terraform binary. What only the provider knows after apply is
// an Unknown, which fails the moment anything uses it; a computed attribute Furnish relies on
// (a service account's e-mail) is derived the way Google derives it.
import { getExpressionAst } from '@cdktn/hcl2json';
import { Document, type ScalarTag } from 'yaml';
import { expressionAst, loadModule, type Hcl } from './terraform-check.ts';

/** A value only `terraform apply` knows; using it in an expression is an error naming why. */
export class Unknown {
  readonly reason: string;
  constructor(reason: string) {
    this.reason = reason;
  }
}

interface AstNode {
  type: string;
  meta?: Record<string, unknown> & { value?: string };
  children?: AstNode[];
}

type Scope = Readonly<Record<string, unknown>>;

/** One step of a traversal: `.name` or `[index]` (the index as HCL source: `"key"`, `0`). */
interface Step {
  type: 'nameTraversal' | 'indexTraversal';
  segment: string;
}

/** Attributes the provider computes, derived from the configuration as Google derives them. */
const COMPUTED: Record<string, (a: Record<string, unknown>) => Record<string, unknown>> = {
  google_service_account: (a) => {
    const email = `${String(a.account_id)}@${String(a.project)}.iam.gserviceaccount.com`;
    return { email, name: `projects/${String(a.project)}/serviceAccounts/${email}`, member: `serviceAccount:${email}` };
  },
  google_pubsub_topic: (a) => ({ id: `projects/${String(a.project)}/topics/${String(a.name)}` }),
  google_pubsub_subscription: (a) => ({ id: `projects/${String(a.project)}/subscriptions/${String(a.name)}` }),
};

/** Attributes only apply makes (generated secrets): Unknown, unless the caller says what apply made (`applied`). */
const AFTER_APPLY: Record<string, readonly string[]> = { random_password: ['result', 'bcrypt_hash'] };

/**
 * What apply made, by resource type: the attributes of one instance, from its configured ones and
 * its address (`random_password.jwt["prod"]`), so that a test can follow a generated value into
 * what uses it; `data.<type>`: what the provider reads for a data source at plan time.
 */
export type Applied = Record<string, (attributes: Record<string, unknown>, address: string) => Record<string, unknown>>;

/** Meta-arguments and nested blocks: not attributes of the instance. */
const NOT_ATTRIBUTES = new Set(['for_each', 'count', 'depends_on', 'lifecycle', 'provider']);

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Unknown);

/** Terraform iterates maps and objects in the lexical order of their keys. */
const sortedEntries = (o: Record<string, unknown>): [string, unknown][] => Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

function known<T>(v: T, what: string): Exclude<T, Unknown> {
  if (v instanceof Unknown) throw new Error(`${what}: ${v.reason}`);
  return v as Exclude<T, Unknown>;
}

/** jsonencode: object keys sorted, as Terraform writes them. */
function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (isObject(v)) return `{${sortedEntries(v).map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  return JSON.stringify(known(v, 'jsonencode'));
}

/** A number as Terraform writes it in YAML: plain decimal digits, never an exponent (1e21 in full). */
function decimal(n: number): string {
  const m = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(String(n));
  if (!m) return String(n);
  const [, sign, lead, rest = '', exponent] = m;
  const digits = `${lead}${rest}`;
  const point = 1 + Number(exponent);
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}`;
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** Numbers in yamlencode's output, written as `decimal` does. */
const DECIMAL_TAG: ScalarTag = { identify: (v) => typeof v === 'number', default: true, tag: 'tag:yaml.org,2002:float', test: /^-?\d+(?:\.\d+)?$/, resolve: Number, stringify: ({ value }) => decimal(value as number) };

/** A line break to libyaml's emitter besides `\n` (CR and NEL are unprintable, so only ever escaped). */
const BREAKS = '\n\u2028\u2029';

/** What go-yaml's emitter prints (its is_printable): not other controls, a BOM, nor astral characters. */
const PRINTABLE = String.raw`\n\x20-\x7e\xa0-\ud7ff\ue000-\ufefe\uff00-\ufffd`;
const UNPRINTABLE = new RegExp(`[^${PRINTABLE}]`, 'u');
/** What go-yaml escapes in double quotes: the unprintable, breaks, `"` and `\`. */
const ESCAPED = new RegExp(String.raw`[^${PRINTABLE}]|[\n"\\\u2028\u2029]`, 'gu');

/** How go-yaml escapes a character in double quotes; `\uFEFF`, `\x01`, `\U0001F600` otherwise. */
const ESCAPES: Record<string, string> = {
  '\0': '0', '\x07': 'a', '\b': 'b', '\t': 't', '\n': 'n', '\v': 'v', '\f': 'f', '\r': 'r', '\x1b': 'e',
  '"': '"', '\\': '\\', '\x85': 'N', '\u2028': 'L', '\u2029': 'P',
};

function escape(c: string): string {
  const named = ESCAPES[c];
  if (named !== undefined) return `\\${named}`;
  const code = c.codePointAt(0) ?? 0;
  const [letter, width] = code <= 0xff ? ['x', 2] : code <= 0xffff ? ['u', 4] : ['U', 8];
  return `\\${letter}${code.toString(16).toUpperCase().padStart(width, '0')}`;
}

/** A double-quoted string as go-yaml writes it. */
const doubleQuoted = (s: string): string => `"${s.replace(ESCAPED, escape)}"`;

/**
 * Whether go-yaml writes a string as a literal block (go-cty-yaml asks for one when it has a `\n`):
 * not when a character is unprintable, a space comes before a break or the string ends with one.
 */
const literalBlock = (s: string): boolean => s.includes('\n') && !UNPRINTABLE.test(s) && !/ [\n\u2028\u2029]| $/.test(s);

/**
 * A literal block as libyaml writes it, with content at `indent` (two spaces at the root too): the
 * indentation indicator 2 when the first line starts with a space or a break; chomping `-` without
 * a final break, `+` with more than one; empty lines not indented. The last `\n` is the caller's.
 */
function literalBlockText(s: string, indent: string): string {
  const isBreak = (c: string | undefined): boolean => c !== undefined && BREAKS.includes(c);
  const indicator = s.startsWith(' ') || isBreak(s[0]) ? '2' : '';
  const chomp = !isBreak(s.at(-1)) ? '-' : s.length === 1 || isBreak(s.at(-2)) ? '+' : '';
  const body = s.replace(/\n$/, '').replace(/(^|[\n\u2028\u2029])(?=[^\n\u2028\u2029])/g, `$1${indent}`);
  return `|${indicator}${chomp}\n${body}`;
}

/** Strings in yamlencode's output: a literal block when go-yaml writes one, else double-quoted (keys always). */
const STRING_TAG: ScalarTag = {
  identify: (v) => typeof v === 'string', default: true, tag: 'tag:yaml.org,2002:str', resolve: (s) => s,
  stringify: ({ value }, ctx) => {
    const s = String(value);
    return !ctx.implicitKey && literalBlock(s) ? literalBlockText(s, ctx.indent || '  ') : doubleQuoted(s);
  },
};

/**
 * yamlencode as Terraform 1.11 writes it (go-cty-yaml over go-yaml's port of libyaml), checked
 * byte for byte against `terraform console`: YAML 1.2 block style, no explicit tags; map keys in
 * lexical order; every key and string double-quoted, with go-yaml's escapes (`\x01`, `\N`, `\L`,
 * `\P`, `\U0001F600`), but a multi-line string as a literal block (`|`, `|-`, `|+`, `|2-` when it
 * starts with a space or a break); empty collections as `[]` and `{}`; a sequence in a mapping not
 * indented; and the document end marker `...` after a lone plain scalar only. Known differences,
 * the first three parsing to the same value: a double-quoted string past column 80 is never folded
 * at a space; a key with a line break stays double-quoted (Terraform: a complex key, `? |-`);
 * Terraform also escapes the character after a leading BOM; and a block ending in U+2028 or
 * U+2029, which Terraform leaves without its final newline, gets one here.
 */
function yamlEncode(value: unknown): string {
  const unknowns = unknownsIn(value);
  if (unknowns.length > 0) throw new Error(`yamlencode: ${unknowns.join('; ')}`);
  const doc = new Document(value, {
    sortMapEntries: true,
    customTags: (tags) => [DECIMAL_TAG, STRING_TAG, ...tags],
  });
  const rootPlain = value === null || typeof value === 'number' || typeof value === 'boolean';
  const text = doc.toString({ indentSeq: false, lineWidth: 0 });
  return rootPlain ? `${text}...\n` : text;
}

const FUNCTIONS: Record<string, (args: unknown[]) => unknown> = {
  merge: (args) => Object.assign({}, ...args.map((a) => known(a, 'merge'))),
  toset: ([a]) => [...new Set(known(a, 'toset') as unknown[])].sort(),
  tolist: ([a]) => known(a, 'tolist'),
  tomap: ([a]) => known(a, 'tomap'),
  tostring: ([a]) => String(known(a, 'tostring')),
  tonumber: ([a]) => { const n = Number(known(a, 'tonumber')); if (Number.isNaN(n)) throw new Error(`tonumber: ${JSON.stringify(a)} is not a number`); return n; },
  lookup: ([m, k, fallback]) => { const map = known(m, 'lookup') as Record<string, unknown>; const key = String(known(k, 'lookup')); return key in map ? map[key] : known(fallback, 'lookup'); },
  keys: ([a]) => sortedEntries(known(a, 'keys') as Record<string, unknown>).map(([k]) => k),
  values: ([a]) => sortedEntries(known(a, 'values') as Record<string, unknown>).map(([, v]) => v),
  concat: (args) => args.flatMap((a) => known(a, 'concat') as unknown[]),
  contains: ([list, v]) => (known(list, 'contains') as unknown[]).includes(known(v, 'contains')),
  length: ([a]) => { const v = known(a, 'length'); return Array.isArray(v) || typeof v === 'string' ? v.length : Object.keys(v as object).length; },
  jsonencode: ([a]) => canonicalJson(a),
  yamlencode: ([a]) => yamlEncode(a),
  lower: ([a]) => String(known(a, 'lower')).toLowerCase(),
  startswith: ([a, prefix]) => String(known(a, 'startswith')).startsWith(String(known(prefix, 'startswith'))),
  upper: ([a]) => String(known(a, 'upper')).toUpperCase(),
  base64decode: ([a]) => Buffer.from(String(known(a, 'base64decode')), 'base64').toString('utf8'),
  setintersection: (args) => { const [first = [], ...rest] = args.map((a) => known(a, 'setintersection') as unknown[]); return first.filter((x) => rest.every((r) => r.includes(x))).sort(); },
};

function index(collection: unknown, key: unknown, where: string): unknown {
  const c = known(collection, where);
  const k = known(key, where);
  if (Array.isArray(c) && typeof k === 'number') return c[k];
  if (isObject(c) && typeof k === 'string' && k in c) return c[k];
  throw new Error(`${where}: no element ${JSON.stringify(k)} (have ${isObject(c) ? Object.keys(c).join(', ') : JSON.stringify(c)})`);
}

const HCL_ESCAPES: Record<string, string> = { n: '\n', r: '\r', t: '\t', '"': '"', '\\': '\\' };

/** The literal text of a quoted template: hcl2json hands it over as written, escapes and all (a heredoc has none but `$${` and `%%{`). */
function unescapeQuoted(text: string): string {
  return text.replace(/\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|([nrt"\\]))|\$\$\{|%%\{/g, (match, u4?: string, u8?: string, c?: string) =>
    u4 || u8 ? String.fromCodePoint(parseInt((u4 ?? u8)!, 16)) : c ? HCL_ESCAPES[c]! : match.slice(1),
  );
}

/** The key of an object constructor's item: a bare name is literal, anything else an expression. */
const bareKey = (source: string): string | undefined => (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(source) ? source : undefined);

export class TerraformModel {
  private readonly locals = new Map<string, Promise<unknown>>();

  private readonly files: Map<string, Hcl>;
  private readonly variables: Scope;
  private readonly modulePath: string;
  private readonly applied: Applied;

  private constructor(files: Map<string, Hcl>, variables: Scope, modulePath: string, applied: Applied) {
    this.files = files;
    this.variables = variables;
    this.modulePath = modulePath;
    this.applied = applied;
  }

  /** The module in `dir`, with `variables` given (`-var`); the others take their defaults. */
  static async load(dir: string, variables: Scope, applied: Applied = {}): Promise<TerraformModel> {
    const { module, problems } = await loadModule(dir);
    if (problems.length > 0) throw new Error(problems.map((p) => `${p.file}: ${p.message}`).join('\n'));
    return new TerraformModel(module.files, variables, dir, applied);
  }

  private blocksOf(kind: string): Record<string, unknown>[] {
    return [...this.files.values()].map((f) => (f[kind] ?? {}) as Record<string, unknown>);
  }

  private variable(name: string): unknown {
    if (name in this.variables) return this.variables[name];
    for (const blocks of this.blocksOf('variable')) {
      const body = (blocks[name] as Hcl[] | undefined)?.[0];
      if (body) {
        if (!('default' in body)) throw new Error(`variable "${name}" has no default: give it`);
        return body.default;
      }
    }
    throw new Error(`variable "${name}" is not declared`);
  }

  /** The error messages of `variable "<name>"`'s validations that fail for the value given (`terraform plan` stops on them). */
  async failedValidations(name: string): Promise<string[]> {
    const body = this.blocksOf('variable').map((blocks) => (blocks[name] as Hcl[] | undefined)?.[0]).find((b) => b !== undefined);
    if (!body) throw new Error(`variable "${name}" is not declared`);
    const failed: string[] = [];
    for (const v of (body.validation ?? []) as Hcl[]) {
      if (known(await this.value(v.condition, {}, `var.${name} validation`), `var.${name} validation`) !== true) failed.push(String(v.error_message));
    }
    return failed;
  }

  /** The value of `local.<name>`. */
  local(name: string): Promise<unknown> {
    let value = this.locals.get(name);
    if (!value) {
      const block = [...this.files.values()].flatMap((f) => (f.locals ?? []) as Record<string, unknown>[]).find((b) => name in b);
      if (!block) throw new Error(`local "${name}" is not declared`);
      value = this.value(block[name], {}, `local.${name}`);
      this.locals.set(name, value);
    }
    return value;
  }

  /** The value of `output "<name>"`. */
  async output(name: string): Promise<unknown> {
    for (const blocks of this.blocksOf('output')) {
      const body = (blocks[name] as Hcl[] | undefined)?.[0];
      if (body) return this.value(body.value, {}, `output.${name}`);
    }
    throw new Error(`output "${name}" is not declared`);
  }

  /** A resource's body, or a data source's (`type` as `data.<type>`). */
  private resourceBody(type: string, name: string): Hcl {
    const [kind, bare] = type.startsWith('data.') ? ['data', type.slice(5)] : ['resource', type];
    for (const blocks of this.blocksOf(kind)) {
      const body = ((blocks[bare] as Record<string, Hcl[]> | undefined)?.[name] ?? [])[0];
      if (body) return body;
    }
    throw new Error(`${kind === 'data' ? 'data source' : 'resource'} "${bare}.${name}" is not declared`);
  }

  /** The instances of a resource (or data source, `data.<type>`) by `each.key` (one, keyed '', without for_each), with `each` for each. */
  async instances(type: string, name: string): Promise<Map<string, Scope>> {
    const body = this.resourceBody(type, name);
    if (body.for_each === undefined) return new Map([['', {}]]);
    const forEach = known(await this.value(body.for_each, {}, `${type}.${name}.for_each`), `${type}.${name}.for_each`);
    const entries: [string, unknown][] = Array.isArray(forEach) ? forEach.map((k) => [String(k), k]) : sortedEntries(forEach as Record<string, unknown>);
    return new Map(entries.map(([key, value]) => [key, { each: { key, value } }]));
  }

  /**
   * One instance's attribute, by a path into its body (`['service_config', 0, 'environment_variables']`
   * reaches into a nested block).
   */
  async attribute(type: string, name: string, key: string, path: readonly (string | number)[]): Promise<unknown> {
    const scope = (await this.instances(type, name)).get(key);
    if (!scope) throw new Error(`${type}.${name}[${JSON.stringify(key)}] does not exist`);
    let raw: unknown = this.resourceBody(type, name);
    for (const step of path) raw = (raw as Record<string | number, unknown> | undefined)?.[step];
    if (raw === undefined) throw new Error(`${type}.${name}: no ${path.join('.')}`);
    return this.value(raw, scope, `${type}.${name}.${path.join('.')}`);
  }

  /** An instance as other expressions see it: its attributes (Unknown where they cannot be known) and the computed ones. */
  private async instance(type: string, name: string, key: string): Promise<Record<string, unknown>> {
    const scope = (await this.instances(type, name)).get(key);
    if (!scope) throw new Error(`${type}.${name}[${JSON.stringify(key)}] does not exist`);
    const attributes: Record<string, unknown> = {};
    for (const [attr, raw] of Object.entries(this.resourceBody(type, name))) {
      if (NOT_ATTRIBUTES.has(attr) || (Array.isArray(raw) && raw.some(isObject))) continue;
      attributes[attr] = await this.value(raw, scope, `${type}.${name}.${attr}`).catch((e: unknown) => new Unknown((e as Error).message));
    }
    const address = `${type}.${name}${key === '' ? '' : `[${JSON.stringify(key)}]`}`;
    const pending = Object.fromEntries((AFTER_APPLY[type] ?? []).map((a) => [a, new Unknown(`${address}.${a} is generated by apply`)]));
    return { ...attributes, ...pending, ...(COMPUTED[type]?.(attributes) ?? {}), ...(this.applied[type]?.(attributes, address) ?? {}) };
  }

  private async resource(type: string, name: string): Promise<unknown> {
    const body = this.resourceBody(type, name);
    if (body.for_each === undefined) return this.instance(type, name, '');
    const all: Record<string, unknown> = {};
    for (const key of (await this.instances(type, name)).keys()) all[key] = await this.instance(type, name, key);
    return all;
  }

  /** A value of hcl2json's JSON form: strings holding `${...}` are expressions, the rest literal. */
  private async value(raw: unknown, scope: Scope, where: string): Promise<unknown> {
    if (typeof raw === 'string') {
      if (!raw.includes('${')) return raw;
      const ast = await expressionAst(where, raw);
      if (!ast) throw new Error(`${where}: cannot parse ${raw.slice(0, 80)}`);
      return this.evaluate(ast as AstNode, scope, where);
    }
    if (Array.isArray(raw)) return Promise.all(raw.map((x) => this.value(x, scope, where)));
    if (isObject(raw)) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(raw)) out[String(await this.value(k, scope, where))] = await this.value(v, scope, where);
      return out;
    }
    return raw;
  }

  private async source(text: string, scope: Scope, where: string): Promise<unknown> {
    const ast = (await getExpressionAst(where, text).catch(() => null)) as AstNode | null;
    if (!ast) throw new Error(`${where}: cannot parse ${text.slice(0, 80)}`);
    return this.evaluate(ast, scope, where);
  }

  private traverse(value: unknown, parts: readonly Step[], where: string): unknown {
    let v = value;
    for (const part of parts) v = index(v, part.type === 'indexTraversal' ? JSON.parse(part.segment) : part.segment, where);
    return v;
  }

  private async root(parts: readonly Step[], scope: Scope, where: string): Promise<{ value: unknown; rest: readonly Step[] }> {
    const name = (i: number) => parts[i]?.segment ?? '';
    const head = name(0);
    if (head in scope) return { value: scope[head], rest: parts.slice(1) };
    if (head === 'var') return { value: this.variable(name(1)), rest: parts.slice(2) };
    if (head === 'local') return { value: await this.local(name(1)), rest: parts.slice(2) };
    if (head === 'path') return { value: { module: this.modulePath, root: this.modulePath }, rest: parts.slice(1) };
    if (head === 'data') {
      // What the provider reads at plan time, when the caller says what it reads (`applied['data.<type>']`).
      const type = `data.${name(1)}`;
      if (!this.applied[type]) return { value: new Unknown(`${type}.${name(2)} is read by the provider`), rest: [] };
      if (parts[3]?.type === 'indexTraversal') return { value: await this.instance(type, name(2), String(JSON.parse(name(3)))), rest: parts.slice(4) };
      return { value: await this.resource(type, name(2)), rest: parts.slice(3) };
    }
    if (/^[a-z0-9]+_[a-z0-9_]+$/.test(head)) {
      // `type.name[key].attr`: build only the instance named when there is an index.
      if (parts[2]?.type === 'indexTraversal') return { value: await this.instance(head, name(1), String(JSON.parse(name(2)))), rest: parts.slice(3) };
      return { value: await this.resource(head, name(1)), rest: parts.slice(2) };
    }
    throw new Error(`${where}: unknown name "${head}"`);
  }

  private async evaluate(node: AstNode, scope: Scope, where: string): Promise<unknown> {
    const meta = node.meta ?? {};
    const children = node.children ?? [];
    const child = (i: number) => this.evaluate(children[i]!, scope, where);
    const src = (key: string) => this.source(String(meta[key]), scope, where);
    switch (node.type) {
      case 'literalValue':
        if (meta.type === 'string') return meta.value;
        if (meta.type === 'number') return Number(meta.value);
        if (meta.type === 'bool') return meta.value === 'true';
        return null;
      case 'template':
      case 'templateWrap': {
        const quoted = String(meta.value ?? '').startsWith('"');
        const parts = await Promise.all(children.map((c, i) => (quoted && c.type === 'literalValue' ? unescapeQuoted(String(c.meta?.value ?? '')) : child(i))));
        if (node.type === 'templateWrap' || parts.length === 1) return known(parts[0], where);
        return parts.map((p) => String(known(p, where))).join('');
      }
      case 'tuple':
        return Promise.all(children.map((_, i) => child(i)));
      case 'object': {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(meta.items as Record<string, string>)) {
          out[bareKey(k) ?? String(known(await this.source(k, scope, where), where))] = await this.source(v, scope, where);
        }
        return out;
      }
      case 'scopeTraversal': {
        const { value, rest } = await this.root(meta.traversal as Step[], scope, where);
        return this.traverse(value, rest, where);
      }
      case 'relativeTraversal':
        return this.traverse(await child(0), meta.traversal as Step[], where);
      case 'index':
        return index(await src('collectionExpression'), await src('keyExpression'), where);
      case 'conditional':
        return known(await src('conditionExpression'), where) === true ? src('trueExpression') : src('falseExpression');
      case 'binaryOp': {
        const numbers = <R>(op: (x: number, y: number) => R) => (x: unknown, y: unknown) => {
          if (typeof x !== 'number' || typeof y !== 'number') throw new Error(`${where}: ${String(meta.operator)} takes numbers, got ${JSON.stringify(x)} and ${JSON.stringify(y)}`);
          return op(x, y);
        };
        const numeric = {
          greaterThan: numbers((x, y) => x > y), greaterThanOrEqual: numbers((x, y) => x >= y), lessThan: numbers((x, y) => x < y), lessThanOrEqual: numbers((x, y) => x <= y),
          add: numbers((x, y) => x + y), subtract: numbers((x, y) => x - y), multiply: numbers((x, y) => x * y),
        };
        const [a, b] = [await src('lhsExpression'), await src('rhsExpression')];
        const ops: Record<string, (x: unknown, y: unknown) => unknown> = {
          equal: (x, y) => JSON.stringify(x) === JSON.stringify(y),
          notEqual: (x, y) => JSON.stringify(x) !== JSON.stringify(y),
          logicalAnd: (x, y) => x === true && y === true,
          logicalOr: (x, y) => x === true || y === true,
          ...numeric,
        };
        const op = ops[String(meta.operator)];
        if (!op) throw new Error(`${where}: operator ${String(meta.operator)} is not supported here`);
        return op(known(a, where), known(b, where));
      }
      case 'function': {
        const fn = String(meta.name);
        if (fn === 'try') {
          for (let i = 0; i < children.length; i++) {
            const v = await child(i).catch(() => new Unknown('failed'));
            if (!(v instanceof Unknown)) return v;
          }
          throw new Error(`${where}: every argument of try() failed`);
        }
        const impl = FUNCTIONS[fn];
        if (!impl) throw new Error(`${where}: function ${fn}() is not supported by this evaluator`);
        return impl(await Promise.all(children.map((_, i) => child(i))));
      }
      case 'for':
        return this.forExpression(meta, scope, where);
      default:
        throw new Error(`${where}: expression ${String(meta.value ?? node.type)} is not supported by this evaluator`);
    }
  }

  private async forExpression(meta: Record<string, unknown>, scope: Scope, where: string): Promise<unknown> {
    const collection = known(await this.source(String(meta.collectionExpression), scope, where), where);
    const entries: [unknown, unknown][] = Array.isArray(collection) ? collection.map((v, i) => [i, v]) : sortedEntries(collection as Record<string, unknown>);
    const keyVar = String(meta.keyVar ?? '');
    const valVar = String(meta.valVar);
    const asObject = String(meta.keyExpression ?? '') !== '';
    const out: unknown[] = [];
    const object: Record<string, unknown> = {};
    for (const [k, v] of entries) {
      const inner = { ...scope, [valVar]: v, ...(keyVar ? { [keyVar]: k } : {}) };
      if (meta.conditionalExpression && known(await this.source(String(meta.conditionalExpression), inner, where), where) !== true) continue;
      const value = await this.source(String(meta.valueExpression), inner, where);
      if (asObject) object[String(known(await this.source(String(meta.keyExpression), inner, where), where))] = value;
      else out.push(value);
    }
    return asObject ? object : out;
  }
}

/** Every Unknown inside a value, with where it is; a value ready for a test has none. */
export function unknownsIn(value: unknown, path = ''): string[] {
  if (value instanceof Unknown) return [`${path || '(root)'}: ${value.reason}`];
  if (Array.isArray(value)) return value.flatMap((v, i) => unknownsIn(v, `${path}[${i}]`));
  if (isObject(value)) return Object.entries(value).flatMap(([k, v]) => unknownsIn(v, path ? `${path}.${k}` : k));
  return [];
}
