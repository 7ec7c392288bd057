// Reading manifests for the CLI: files or directories (recursively: *.yaml, *.yml, *.json),
// multi-document YAML (JSON is read by the same YAML 1.2 parser), every problem located by file
// and line or document number, collected rather than thrown so that one run reports them all.
// NamespaceTemplates for render and validate; objects of any kind for `admit --cluster`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parseAllDocuments, type YAMLError } from 'yaml';
import type { KubeObject } from '../kube/types.ts';
import { isRecord, type JsonRecord } from '../render/json.ts';
import type { NamespaceTemplate } from '../render/types.ts';

export interface LoadProblem {
  file: string;
  /** 1-based, when the problem has a position in the text. */
  line?: number;
  column?: number;
  /** Where in the file, when there is no line: `document 2`, `document 2, items[0]`. */
  where?: string;
  message: string;
}

export interface SourceDocument {
  file: string;
  /** 1-based position of the document in its file, empty documents counted. */
  document: number;
  value: unknown;
}

export interface SourceTemplate {
  file: string;
  /** `document 2` or `document 2, items[0]` (a List). */
  where: string;
  template: NamespaceTemplate;
}

export interface SourceObject {
  file: string;
  /** `document 2` or `document 2, items[0]` (a List). */
  where: string;
  object: KubeObject;
}

export interface Loaded<T> {
  items: T[];
  problems: LoadProblem[];
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
/** kustomize's own file sits beside manifests but is not one. */
const KUSTOMIZATION_FILES = new Set(['kustomization.yaml', 'kustomization.yml', 'Kustomization']);
const TEMPLATE_KIND = 'NamespaceTemplate';
const LIST_KINDS = new Set(['List', 'NamespaceTemplateList']);

export function formatLoadProblem(p: LoadProblem): string {
  if (p.line !== undefined) return `${p.file}:${p.line}:${p.column ?? 1}: ${p.message}`;
  return p.where ? `${p.file}: ${p.where}: ${p.message}` : `${p.file}: ${p.message}`;
}

export function fileErrorMessage(err: unknown): string {
  const code = (err as { code?: string }).code;
  if (code === 'ENOENT') return 'no such file or directory';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'is a directory, expected a file';
  return err instanceof Error ? err.message : String(err);
}

function isManifestFile(name: string): boolean {
  return MANIFEST_EXTENSIONS.has(extname(name).toLowerCase()) && !KUSTOMIZATION_FILES.has(name);
}

/** Manifest files under a directory, sorted, hidden entries skipped, symlinked directories not followed. */
function manifestFilesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return manifestFilesUnder(path);
      return (entry.isFile() || entry.isSymbolicLink()) && isManifestFile(entry.name) ? [path] : [];
    });
}

/** The files named by `paths`: a file as given (any extension), a directory recursively. */
export function listManifestFiles(paths: readonly string[]): Loaded<string> {
  const loaded: Loaded<string> = { items: [], problems: [] };
  for (const path of paths) {
    try {
      if (!statSync(path).isDirectory()) loaded.items.push(path);
      else {
        const files = manifestFilesUnder(path);
        if (files.length === 0) loaded.problems.push({ file: path, message: 'directory holds no .yaml, .yml or .json file' });
        loaded.items.push(...files);
      }
    } catch (err) {
      loaded.problems.push({ file: path, message: fileErrorMessage(err) });
    }
  }
  return loaded;
}

/** The YAML library's message without its own " at line L, column C:" and code frame. */
function yamlProblem(file: string, err: YAMLError): LoadProblem {
  const message = err.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
  const pos = err.linePos?.[0];
  return { file, line: pos?.line, column: pos?.col, message: `invalid YAML: ${message}` };
}

/** Every document of a YAML (or JSON) text; a document with a syntax error yields problems only. */
export function parseDocuments(file: string, text: string): Loaded<SourceDocument> {
  const loaded: Loaded<SourceDocument> = { items: [], problems: [] };
  parseAllDocuments(text).forEach((doc, i) => {
    if (doc.errors.length > 0) {
      loaded.problems.push(...doc.errors.map((err) => yamlProblem(file, err)));
      return;
    }
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) loaded.items.push({ file, document: i + 1, value });
  });
  return loaded;
}

/** Every non-empty document of every file named by `paths`. */
export function loadDocuments(paths: readonly string[]): Loaded<SourceDocument> {
  const files = listManifestFiles(paths);
  const loaded: Loaded<SourceDocument> = { items: [], problems: [...files.problems] };
  for (const file of files.items) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      loaded.problems.push({ file, message: fileErrorMessage(err) });
      continue;
    }
    const parsed = parseDocuments(file, text);
    loaded.items.push(...parsed.items);
    loaded.problems.push(...parsed.problems);
  }
  return loaded;
}

function describeKind(value: unknown): string {
  if (!isRecord(value)) return `a ${Array.isArray(value) ? 'list' : typeof value}, not an object`;
  return `${String(value.apiVersion ?? '(no apiVersion)')} ${String(value.kind ?? '(no kind)')}`;
}

/** What one document holds: its value, or each item of a List, with where it is in the file. */
function entriesOf(doc: SourceDocument, isList: (value: JsonRecord) => boolean): { where: string; value: unknown }[] {
  const where = `document ${doc.document}`;
  const value = doc.value;
  if (!isRecord(value) || !isList(value) || !Array.isArray(value.items)) return [{ where, value }];
  return value.items.map((item: unknown, i) => ({ where: `${where}, items[${i}]`, value: item }));
}

/**
 * The entries of a document that `refusal` accepts (it returns undefined for them), built by
 * `make`; every other entry is a problem saying why, located by file and entry.
 */
function sortEntries<T>(
  doc: SourceDocument,
  isList: (value: JsonRecord) => boolean,
  refusal: (value: unknown) => string | undefined,
  make: (where: string, value: JsonRecord) => T,
): Loaded<T> {
  const loaded: Loaded<T> = { items: [], problems: [] };
  for (const { where, value } of entriesOf(doc, isList)) {
    const refused = refusal(value);
    if (refused === undefined) loaded.items.push(make(where, value as JsonRecord));
    else loaded.problems.push({ file: doc.file, where, message: refused });
  }
  return loaded;
}

const isTemplateList = (value: JsonRecord): boolean => LIST_KINDS.has(value.kind as string);

/** The NamespaceTemplates of one document: itself, or the items of a List of them. */
export function templatesOf(doc: SourceDocument): Loaded<SourceTemplate> {
  return sortEntries(
    doc,
    isTemplateList,
    (value) => (isRecord(value) && value.kind === TEMPLATE_KIND ? undefined : `${describeKind(value)} is not a ${TEMPLATE_KIND}`),
    (where, value) => ({ file: doc.file, where, template: value as NamespaceTemplate }),
  );
}

/** `kubectl get -o yaml` writes `List`; the API server writes `RoleList`, `ClusterRoleBindingList`... */
const isAnyList = (value: JsonRecord): boolean => typeof value.kind === 'string' && value.kind.endsWith('List');

/** Why a value cannot stand for an object of a cluster; undefined when it can. */
function objectRefusal(value: unknown): string | undefined {
  if (!isRecord(value) || typeof value.apiVersion !== 'string' || typeof value.kind !== 'string') {
    return `${describeKind(value)} is not a Kubernetes object (apiVersion and kind are required)`;
  }
  const meta = value.metadata;
  // Look-ups find objects by name (a binding's roleRef names its role): a nameless one would be lost.
  if (!isRecord(meta) || typeof meta.name !== 'string' || meta.name === '') return `${describeKind(value)} has no metadata.name`;
  return undefined;
}

/** The Kubernetes objects of one document: itself, or the items of a List (any `*List` kind). */
export function objectsOf(doc: SourceDocument): Loaded<SourceObject> {
  return sortEntries(doc, isAnyList, objectRefusal, (where, value) => ({ file: doc.file, where, object: value as KubeObject }));
}

/** What `of` finds in every document of every file named by `paths`, with every problem. */
function loadEach<T>(paths: readonly string[], of: (doc: SourceDocument) => Loaded<T>): Loaded<T> {
  const docs = loadDocuments(paths);
  const loaded: Loaded<T> = { items: [], problems: [...docs.problems] };
  for (const doc of docs.items) {
    const found = of(doc);
    loaded.items.push(...found.items);
    loaded.problems.push(...found.problems);
  }
  return loaded;
}

/** Every NamespaceTemplate named by `paths`; any other document is a problem naming its file and index. */
export function loadTemplates(paths: readonly string[]): Loaded<SourceTemplate> {
  return loadEach(paths, templatesOf);
}

/** Every Kubernetes object named by `paths`, of any kind; Lists are flattened into their items. */
export function loadObjects(paths: readonly string[]): Loaded<SourceObject> {
  return loadEach(paths, objectsOf);
}
