// `npm run check:terraform`: validates terraform/ offline, where no provider
// download is possible. Every .tf file is parsed with HashiCorp's own HCL parser (compiled to
// WebAssembly in @cdktn/hcl2json, the maintained continuation of CDKTF's), then checked for what
// `terraform validate` would catch without providers: undeclared or unused variables, unknown
// locals, resources, data sources and functions, providers not pinned, outputs without a
// description, and functions Terraform deploys that `npm run build` does not build.
import { getExpressionAst, getReferencesInExpression, parse } from '@cdktn/hcl2json';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** One parsed file: hcl2json's JSON form, blocks as arrays. */
export type Hcl = Record<string, unknown>;

export interface Problem {
  file: string;
  message: string;
}

export interface Module {
  files: Map<string, Hcl>;
  /** Every `${...}` expression found in a file, with the references and functions it uses. */
  expressions: ExpressionUse[];
}

export interface ExpressionUse {
  file: string;
  references: string[];
  functions: string[];
}

/** Terraform's built-in functions (1.6 to 1.9); anything else called in an expression is an error. */
export const BUILTIN_FUNCTIONS = new Set(
  ('abs abspath alltrue anytrue base64decode base64encode base64gzip base64sha256 base64sha512 basename bcrypt can ceil chomp chunklist cidrhost cidrnetmask cidrsubnet cidrsubnets coalesce coalescelist compact concat contains csvdecode dirname distinct element endswith file filebase64 filebase64sha256 filebase64sha512 fileexists filemd5 fileset filesha1 filesha256 filesha512 flatten floor format formatdate formatlist indent index issensitive join jsondecode jsonencode keys length list log lookup lower map matchkeys max md5 merge min nonsensitive one parseint pathexpand plantimestamp pow range regex regexall replace reverse rsadecrypt sensitive setintersection setproduct setsubtract setunion sha1 sha256 sha512 signum slice sort split startswith strcontains strrev substr sum templatefile templatestring textdecodebase64 textencodebase64 timeadd timecmp timestamp title tobool tolist tomap tonumber toset tostring transpose trim trimprefix trimspace trimsuffix try type upper urlencode uuid uuidv5 values yamldecode yamlencode zipmap')
    .split(' '),
);

/** Roots an expression may name without declaring them. */
const IMPLICIT_ROOTS = new Set(['each', 'count', 'path', 'self', 'terraform']);

function blocks(file: Hcl, kind: string): Record<string, unknown> {
  return (file[kind] as Record<string, unknown> | undefined) ?? {};
}

/** Names declared across the module, by what kind of thing they are. */
export function declarations(files: Map<string, Hcl>): {
  variables: Set<string>;
  locals: Set<string>;
  resources: Set<string>;
  data: Set<string>;
  providers: Set<string>;
} {
  const variables = new Set<string>();
  const locals = new Set<string>();
  const resources = new Set<string>();
  const data = new Set<string>();
  const providers = new Set<string>();
  for (const file of files.values()) {
    for (const name of Object.keys(blocks(file, 'variable'))) variables.add(name);
    for (const block of (file.locals as Record<string, unknown>[] | undefined) ?? []) {
      for (const name of Object.keys(block)) locals.add(name);
    }
    for (const [type, byName] of Object.entries(blocks(file, 'resource'))) {
      for (const name of Object.keys(byName as object)) resources.add(`${type}.${name}`);
    }
    for (const [type, byName] of Object.entries(blocks(file, 'data'))) {
      for (const name of Object.keys(byName as object)) data.add(`${type}.${name}`);
    }
    for (const tf of (file.terraform as Hcl[] | undefined) ?? []) {
      for (const required of (tf.required_providers as Hcl[] | undefined) ?? []) {
        for (const name of Object.keys(required)) providers.add(name);
      }
    }
  }
  return { variables, locals, resources, data, providers };
}

/** What a reference names, or undefined for references that need no declaration (loop variables, each, path). */
export function referenceProblem(ref: string, decl: ReturnType<typeof declarations>): string | undefined {
  const [root, second, third] = ref.split('.');
  if (root === undefined || IMPLICIT_ROOTS.has(root)) return undefined;
  if (root === 'var') return second !== undefined && !decl.variables.has(second) ? `variable "${second}" is not declared` : undefined;
  if (root === 'local') return second !== undefined && !decl.locals.has(second) ? `local "${second}" is not declared` : undefined;
  if (root === 'data') {
    const name = `${second}.${third}`;
    return decl.data.has(name) ? undefined : `data source "${name}" is not declared`;
  }
  // `<type>.<name>` with a provider-prefixed type is a resource; anything else is a loop variable.
  if (second !== undefined && /^[a-z0-9]+_[a-z0-9_]+$/.test(root)) {
    const name = `${root}.${second}`;
    return decl.resources.has(name) ? undefined : `resource "${name}" is not declared`;
  }
  return undefined;
}

/** Every check that needs no provider, over a parsed module. */
export function checkModule(module: Module, builtFunctions: readonly string[]): Problem[] {
  const decl = declarations(module.files);
  const problems: Problem[] = [];
  const used = new Set<string>();
  for (const use of module.expressions) {
    for (const ref of use.references) {
      const problem = referenceProblem(ref, decl);
      if (problem) problems.push({ file: use.file, message: `${problem} (in "${ref}")` });
      if (ref.startsWith('var.')) used.add(ref.split('.')[1]!);
    }
    for (const fn of use.functions) {
      if (!BUILTIN_FUNCTIONS.has(fn) && !fn.startsWith('provider::')) problems.push({ file: use.file, message: `unknown function "${fn}()"` });
    }
  }
  for (const [file, hcl] of module.files) {
    for (const [name, variable] of Object.entries(blocks(hcl, 'variable'))) {
      const body = (variable as Hcl[])[0] ?? {};
      if (!used.has(name)) problems.push({ file, message: `variable "${name}" is declared but never used` });
      if (typeof body.description !== 'string') problems.push({ file, message: `variable "${name}" has no description` });
    }
    for (const [name, output] of Object.entries(blocks(hcl, 'output'))) {
      if (typeof ((output as Hcl[])[0] ?? {}).description !== 'string') problems.push({ file, message: `output "${name}" has no description` });
    }
    for (const type of [...Object.keys(blocks(hcl, 'resource')), ...Object.keys(blocks(hcl, 'data'))]) {
      const provider = type.split('_')[0]!;
      if (!decl.providers.has(provider)) problems.push({ file, message: `"${type}" needs provider "${provider}", which required_providers does not pin` });
    }
  }
  const deployed = deployedFunctions(module.files);
  for (const name of deployed) {
    if (!builtFunctions.includes(name)) problems.push({ file: 'locals.tf', message: `function "${name}" is deployed but functions/${name}/index.ts does not exist` });
  }
  return problems;
}

/** The function names in locals `webhooks` and `reconcilers` (literal lists and maps). */
export function deployedFunctions(files: Map<string, Hcl>): string[] {
  const names: string[] = [];
  for (const file of files.values()) {
    for (const block of (file.locals as Record<string, unknown>[] | undefined) ?? []) {
      if (Array.isArray(block.webhooks)) names.push(...(block.webhooks as string[]));
      if (block.reconcilers && typeof block.reconcilers === 'object') names.push(...Object.keys(block.reconcilers));
    }
  }
  return names;
}

function expressionStrings(value: unknown, out: string[]): string[] {
  if (typeof value === 'string') {
    if (value.includes('${')) out.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value) expressionStrings(item, out);
  } else if (value && typeof value === 'object') {
    // Keys hold expressions too: `for_each`, map keys of object constructors.
    for (const [key, item] of Object.entries(value)) {
      if (key.includes('${')) out.push(key);
      expressionStrings(item, out);
    }
  }
  return out;
}

/** A variable's `type = map(object({...}))` is a type constraint, not a call of functions. */
function withoutTypeConstraints(hcl: Hcl): Hcl {
  const variables = Object.fromEntries(
    Object.entries(blocks(hcl, 'variable')).map(([name, bodies]) => [
      name,
      (bodies as Hcl[]).map(({ type: _type, ...rest }) => rest),
    ]),
  );
  return { ...hcl, variable: variables };
}

interface AstNode {
  type?: string;
  meta?: { name?: string; fullAccessor?: string };
  children?: (AstNode | undefined)[];
}

function functionNames(node: AstNode | null | undefined, out: string[] = []): string[] {
  if (!node) return out;
  if (node.type === 'function' && node.meta?.name) out.push(node.meta.name);
  for (const child of node.children ?? []) functionNames(child, out);
  return out;
}

/**
 * Every traversal the expression names. hcl2json's getReferencesInExpression does not look inside
 * the body of a `for` expression, so its list alone would let an undeclared name there through.
 */
function traversals(node: AstNode | null | undefined, out: string[] = []): string[] {
  if (!node) return out;
  // Indexes are not names: `google_pubsub_topic.events["billing"].name` names resource google_pubsub_topic.events.
  if (node.type === 'scopeTraversal' && node.meta?.fullAccessor) out.push(node.meta.fullAccessor.replace(/\[[^\]]*\]/g, ''));
  for (const child of node.children ?? []) traversals(child, out);
  return out;
}

/**
 * hcl2json gives an attribute either as one interpolation (`${expr}`) or as a template with text
 * around interpolations; the AST parser takes the first bare and the second quoted.
 */
export async function expressionAst(file: string, expr: string): Promise<AstNode | undefined> {
  const whole = /^\$\{([\s\S]*)\}$/.exec(expr)?.[1];
  for (const candidate of whole === undefined ? [templateLiteral(expr)] : [whole, templateLiteral(expr)]) {
    const ast = (await getExpressionAst(file, candidate).catch(() => null)) as AstNode | null;
    if (ast) return ast;
  }
  return undefined;
}

function templateLiteral(text: string): string {
  return `"${text.replace(/\n/g, '\\n')}"`;
}

/** Parses every .tf file of a directory; a syntax error is a problem naming file and position. */
export async function loadModule(dir: string): Promise<{ module: Module; problems: Problem[] }> {
  const files = new Map<string, Hcl>();
  const expressions: ExpressionUse[] = [];
  const problems: Problem[] = [];
  for (const name of readdirSync(dir).filter((n) => n.endsWith('.tf')).sort()) {
    let hcl: Hcl;
    try {
      hcl = await parse(name, readFileSync(join(dir, name), 'utf8'));
    } catch (err) {
      problems.push({ file: name, message: (err as Error).message });
      continue;
    }
    files.set(name, hcl);
    for (const expr of expressionStrings(withoutTypeConstraints(hcl), [])) {
      const references = (await getReferencesInExpression(name, expr)).map((r) => r.value);
      const ast = await expressionAst(name, expr);
      if (ast === undefined) problems.push({ file: name, message: `cannot parse expression ${expr.slice(0, 80)}` });
      expressions.push({ file: name, references: [...new Set([...references, ...traversals(ast)])], functions: functionNames(ast) });
    }
  }
  return { module: { files, expressions }, problems };
}

export async function checkTerraform(dir: string, builtFunctions: readonly string[]): Promise<Problem[]> {
  const { module, problems } = await loadModule(dir);
  return [...problems, ...checkModule(module, builtFunctions)];
}

/**
 * Terraform's own formatting, where a Terraform binary is on PATH (it needs no provider): the
 * files it would rewrite, as problems. Undefined when there is no binary to ask.
 */
export function formatProblems(dir: string, binary = 'terraform'): Problem[] | undefined {
  const run = spawnSync(binary, ['fmt', '-check', '-recursive', '-no-color'], { cwd: dir, encoding: 'utf8', env: { ...process.env, TF_CLI_CONFIG_FILE: '/dev/null' } });
  if (run.error) return undefined;
  if (run.status === 0) return [];
  const files = run.stdout.split('\n').filter((l) => l.trim() !== '');
  return files.length > 0 ? files.map((file) => ({ file, message: 'not formatted as `terraform fmt` writes it (run terraform fmt terraform/)' })) : [{ file: '.', message: `terraform fmt -check failed: ${run.stderr.trim()}` }];
}

if (import.meta.main) {
  const root = join(import.meta.dirname, '..');
  const built = readdirSync(join(root, 'functions'));
  const format = formatProblems(join(root, 'terraform'));
  if (!format) console.log('terraform: no Terraform binary on PATH, formatting not checked (terraform fmt)');
  const problems = [...(await checkTerraform(join(root, 'terraform'), built)), ...(format ?? [])];
  for (const p of problems) console.error(`terraform/${p.file}: ${p.message}`);
  console.log(problems.length === 0 ? 'terraform: no problems' : `terraform: ${problems.length} problem(s)`);
  process.exitCode = problems.length === 0 ? 0 : 1;
}
