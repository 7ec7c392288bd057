// `npm run build [-- name...]`: bundles each functions/<name>/index.ts with esbuild into
// dist/<name>/index.js plus a package.json naming the runtime dependencies left outside the bundle
// (the functions framework, which Cloud Functions runs the bundle with). dist/manifest.json gives
// each bundle's content hash, so the uploaded archive can be named by it and every change redeploys.
// A webhook bundle that would pull in @kubernetes/client-node fails the build: admission must not
// pay its start-up cost. What a function imports lazily (`await import(...)`: client-node for
// kubeconfig plugins, gRPC Pub/Sub for publishing, BigQuery) goes into chunks/ beside index.js,
// parsed only when that code path first runs, so that a reconciler starts nearly as fast as the
// framework alone (`npm run bench -- startup`).
import { build } from 'esbuild';
import type { Metafile } from 'esbuild';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WEBHOOKS } from '../shared/config/types.ts';

const root = join(import.meta.dirname, '..');

/**
 * Packages left outside the bundle, installed from the bundle's package.json: the framework
 * Cloud Functions runs the bundle with, and `yaml`, which the webhooks load only when their
 * configuration file is YAML (bundled, its 250 KiB would be parsed at every cold start).
 */
export const EXTERNAL = ['@google-cloud/functions-framework', 'yaml'];
/** Packages a webhook bundle must never contain. */
export const FORBIDDEN_IN_WEBHOOKS = ['@kubernetes/client-node'];
/**
 * Packages no function may load at start (only where used, through a lazy import): together they
 * made a reconciler's import cost ~9x the framework's time and ~3x its memory.
 */
export const FORBIDDEN_AT_START = ['@kubernetes/client-node', '@google-cloud/pubsub', '@grpc/grpc-js', '@google-cloud/bigquery', 'google-auth-library'];

export interface BuiltFunction {
  name: string;
  dir: string;
  hash: string;
  /** Size of index.js, what every cold start parses. */
  bytes: number;
  /** Size of all files, lazy chunks included. */
  totalBytes: number;
  /** Packages (node_modules) bundled in. */
  packages: string[];
  /** Those of them that index.js loads at start (the rest sit in lazy chunks). */
  startPackages: string[];
  dependencies: Record<string, string>;
}

function packageOf(path: string): string | undefined {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path);
  return m?.[1];
}

/** Packages in the outputs index.js loads statically (itself and the chunks it imports), from the metafile. */
export function packagesAtStart(meta: Metafile, entry: string): string[] {
  const seen = new Set<string>();
  const visit = (out: string) => {
    if (seen.has(out) || !meta.outputs[out]) return;
    seen.add(out);
    for (const i of meta.outputs[out].imports) if (i.kind === 'import-statement' && !i.external) visit(i.path);
  };
  visit(entry);
  return [...new Set([...seen].flatMap((o) => Object.keys(meta.outputs[o]!.inputs)).map(packageOf).filter((p): p is string => p !== undefined))].sort();
}

function installedVersion(pkg: string): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

export function functionNames(): string[] {
  const dir = join(root, 'functions');
  return readdirSync(dir).filter((n) => existsSync(join(dir, n, 'index.ts'))).sort();
}

export async function buildFunction(name: string, outRoot = join(root, 'dist')): Promise<BuiltFunction> {
  const dir = join(outRoot, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const result = await build({
    entryPoints: { index: join(root, 'functions', name, 'index.ts') },
    outdir: dir,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    absWorkingDir: root,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external: EXTERNAL,
    metafile: true,
    legalComments: 'none',
    logLevel: 'silent',
    // CommonJS packages bundled into an ES module may still call require() for Node built-ins.
    banner: { js: "import { createRequire as __furnishCreateRequire } from 'node:module'; const require = __furnishCreateRequire(import.meta.url);" },
  });
  const meta: Metafile = result.metafile;
  const packages = [...new Set(Object.keys(meta.inputs).map(packageOf).filter((p): p is string => p !== undefined))].sort();
  const imported = new Set(Object.values(meta.outputs).flatMap((o) => o.imports.filter((i) => i.external).map((i) => i.path)));
  const entry = Object.keys(meta.outputs).find((o) => meta.outputs[o]!.entryPoint !== undefined)!;
  const startPackages = packagesAtStart(meta, entry);
  const heavy = startPackages.filter((p) => FORBIDDEN_AT_START.includes(p));
  if (heavy.length > 0) throw new Error(`${name} must not load ${heavy.join(', ')} at start: import it lazily where it is used (npm run bench -- startup)`);
  const dependencies = Object.fromEntries(EXTERNAL.filter((p) => imported.has(p)).map((p) => [p, installedVersion(p)]));
  if ((WEBHOOKS as readonly string[]).includes(name)) {
    const forbidden = packages.filter((p) => FORBIDDEN_IN_WEBHOOKS.includes(p));
    if (forbidden.length > 0) throw new Error(`webhook ${name} must not bundle ${forbidden.join(', ')} (see DESIGN.md, Performance budget)`);
  }
  const manifest = { name: `furnish-${name}`, private: true, type: 'module', main: 'index.js', engines: { node: '>=22' }, dependencies };
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const hash = createHash('sha256');
  let totalBytes = 0;
  for (const file of Object.keys(meta.outputs).sort()) {
    const code = readFileSync(join(root, file));
    hash.update(file.slice(file.lastIndexOf(`/${name}/`))).update(code);
    totalBytes += code.length;
  }
  hash.update(JSON.stringify(manifest));
  return { name, dir, hash: hash.digest('hex'), bytes: readFileSync(join(dir, 'index.js')).length, totalBytes, packages, startPackages, dependencies };
}

async function main(): Promise<void> {
  const wanted = process.argv.slice(2);
  const names = wanted.length > 0 ? wanted : functionNames();
  const built: BuiltFunction[] = [];
  for (const name of names) {
    const b = await buildFunction(name);
    built.push(b);
    console.log(`${name.padEnd(22)} ${(b.bytes / 1024).toFixed(0).padStart(6)} KiB (${(b.totalBytes / 1024).toFixed(0).padStart(6)} KiB with lazy chunks)  sha256:${b.hash.slice(0, 16)}  at start: ${b.startPackages.join(', ') || '(none)'}`);
  }
  const manifestPath = join(root, 'dist', 'manifest.json');
  const previous = existsSync(manifestPath) ? (JSON.parse(readFileSync(manifestPath, 'utf8')) as Record<string, unknown>) : {};
  const entries = Object.fromEntries(built.map((b) => [b.name, { hash: b.hash, archive: `${b.name}-${b.hash.slice(0, 16)}.zip`, bytes: b.bytes }]));
  writeFileSync(manifestPath, `${JSON.stringify({ ...previous, ...entries }, null, 2)}\n`);
}

if (import.meta.main) {
  main().catch((e: unknown) => {
    console.error((e as Error).message);
    process.exit(1);
  });
}
