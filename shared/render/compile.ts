// A template object compiled once (per object: templates are values, never edited in place, as
// the validation and hash caches already assume) so that rendering it for one namespace does only
// what depends on the namespace: the strings holding tokens are substituted, a builder that knows
// the object's shape makes a fresh copy already placed in the namespace, and the checks of the
// parts no token changes are not repeated. What the checks would refuse, and objects of unusual
// shape (a `__proto__` key, a sparse array, a token in apiVersion or kind, labels that are not
// strings), are left to render.ts's plain way, which says what is wrong: both ways make the same
// objects.
import { KEY } from '../keys.ts';
import type { KubeObject } from '../kube/types.ts';
import { APPLYSET_PARENT_KIND, APPLYSET_PARENT_NAME } from './applyset.ts';
import { templateHash, type TemplateHash } from './hash.ts';
import { formatGroupKind, groupOf, nameErrors, nameRuleOf, type NameRule } from './kinds.ts';
import { isPlainArray, isRecord } from './json.ts';
import { labelValueErrors } from './names.ts';
import { compileTokens, type TokenValues } from './tokens.ts';
import type { GroupKind } from './types.ts';

/** Where a rendered object goes: the namespace and the values of Furnish's two labels. */
export interface Placement {
  namespace: string;
  template: string;
  applySetId: string;
}

/** Makes a fresh copy of one value, given the object's token strings substituted for the namespace. */
type Build = (strings: readonly string[], place: Placement) => unknown;

/** A value of the compiled object: fixed (a primitive, safe to share) or built at each render. */
type Part = { fixed: unknown } | { build: Build };

/** A string of the object: its text when no token value changes it, else its index in `strings`. */
type Text = string | number;

export interface CompiledObject {
  groupKind: GroupKind;
  hash: TemplateHash;
  /** The object's strings that hold tokens, each made from the namespace's values. */
  strings: ReadonlyArray<(values: TokenValues) => string>;
  build: Build;
  /** Whether the fixed name and label values pass the checks render would make. */
  fixedOk: boolean;
  nameRule: NameRule;
  name: Text;
  /** Label values that hold tokens: checked at each render. */
  labelStrings: number[];
  namespace: Text | undefined;
}

/** Thrown inside compilation for a shape the builders do not copy exactly as cloneJson does. */
class Unusual extends Error {}

class Compiler {
  readonly strings: Array<(values: TokenValues) => string> = [];

  text(value: string): Text {
    const compiled = compileTokens(value);
    return typeof compiled === 'string' ? compiled : this.strings.push(compiled) - 1;
  }

  part(value: unknown): Part {
    if (typeof value === 'string') return textPart(this.text(value));
    if (typeof value !== 'object' || value === null) return { fixed: value };
    if (Array.isArray(value)) return this.array(value);
    const keys = Object.keys(value);
    return { build: recordBuilder(keys, keys.map((k) => this.part((value as Record<string, unknown>)[k]))) };
  }

  array(value: unknown[]): Part {
    if (!isPlainArray(value)) throw new Unusual('array subclass');
    for (let i = 0; i < value.length; i++) if (!(i in value)) throw new Unusual('sparse array');
    const parts = value.map((item) => this.part(item));
    if (parts.every((p) => 'fixed' in p)) {
      const fixed = parts.map((p) => (p as { fixed: unknown }).fixed);
      return { build: () => fixed.slice() };
    }
    const builds = parts.map(buildOf);
    return { build: (strings, place) => builds.map((b) => b(strings, place)) };
  }
}

function textPart(text: Text): Part {
  return typeof text === 'string' ? { fixed: text } : { build: (strings) => strings[text] };
}

function buildOf(part: Part): Build {
  if ('build' in part) return part.build;
  const { fixed } = part;
  return () => fixed;
}

/** A plain object with these keys, in this order, each value made by its part. */
function recordBuilder(keys: string[], parts: Part[]): Build {
  if (keys.includes('__proto__')) throw new Unusual('__proto__ key');
  const fixed = parts.map((p) => ('fixed' in p ? p.fixed : undefined));
  const builds = parts.map((p) => ('build' in p ? p.build : undefined));
  return (strings, place) => {
    const out: Record<string, unknown> = {};
    for (let i = 0; i < keys.length; i++) {
      const build = builds[i];
      out[keys[i]!] = build === undefined ? fixed[i] : build(strings, place);
    }
    return out;
  };
}

function textOf(text: Text, strings: readonly string[]): string {
  return typeof text === 'string' ? text : strings[text]!;
}

function nameOk(rule: NameRule, groupKind: GroupKind, name: string): boolean {
  if (nameErrors(rule, name).length > 0) return false;
  return !(name === APPLYSET_PARENT_NAME && formatGroupKind(groupKind) === formatGroupKind(APPLYSET_PARENT_KIND));
}

/**
 * The placed metadata: `{ name, namespace, labels: { ...labels, ...Furnish's }, ...rest }`, as
 * render.ts's placeInNamespace writes it.
 */
function metadataBuilder(name: Text, labels: Build, rest: { keys: string[]; parts: Part[] }): Build {
  const keys = rest.keys;
  if (keys.includes('__proto__')) throw new Unusual('__proto__ key');
  const builds = rest.parts.map(buildOf);
  return (strings, place) => {
    const placedLabels = labels(strings, place) as Record<string, string>;
    placedLabels[KEY.template] = place.template;
    placedLabels[KEY.applySetPartOf] = place.applySetId;
    const out: Record<string, unknown> = { name: textOf(name, strings), namespace: place.namespace, labels: placedLabels };
    for (let i = 0; i < keys.length; i++) out[keys[i]!] = builds[i]!(strings, place);
    return out;
  };
}

function compile(raw: unknown): CompiledObject | null {
  if (!isRecord(raw) || !isRecord(raw.metadata)) return null;
  const { apiVersion, kind, metadata: meta } = raw;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || apiVersion.includes('$(') || kind.includes('$(')) return null;
  if (typeof meta.name !== 'string' || !(meta.namespace === undefined || meta.namespace === null || typeof meta.namespace === 'string')) return null;
  const labels = meta.labels ?? {};
  if (!isRecord(labels) || !Object.values(labels).every((v) => typeof v === 'string')) return null;
  const c = new Compiler();
  try {
    const name = c.text(meta.name);
    const namespace = typeof meta.namespace === 'string' ? c.text(meta.namespace) : undefined;
    const labelKeys = Object.keys(labels);
    const labelTexts = labelKeys.map((k) => c.text(labels[k] as string));
    const restKeys = Object.keys(meta).filter((k) => k !== 'name' && k !== 'namespace' && k !== 'labels');
    const metadata = metadataBuilder(name, recordBuilder(labelKeys, labelTexts.map(textPart)), { keys: restKeys, parts: restKeys.map((k) => c.part(meta[k])) });
    const keys = Object.keys(raw);
    const build = recordBuilder(keys, keys.map((k) => (k === 'metadata' ? { build: metadata } : c.part(raw[k]))));
    const groupKind = { group: groupOf(apiVersion), kind };
    const nameRule = nameRuleOf(groupKind);
    const fixedLabelsOk = labelTexts.every((t) => typeof t !== 'string' || labelValueErrors(t).length === 0);
    return {
      groupKind,
      hash: templateHash(raw),
      strings: c.strings,
      build,
      fixedOk: fixedLabelsOk && (typeof name !== 'string' || nameOk(nameRule, groupKind, name)),
      nameRule,
      name,
      labelStrings: labelTexts.filter((t) => typeof t === 'number'),
      namespace,
    };
  } catch (e) {
    if (e instanceof Unusual) return null;
    throw e;
  }
}

const compiled = new WeakMap<object, CompiledObject | null>();

/** The template object compiled, once per object; null for a shape only the plain way renders. */
export function compiledObject(raw: object): CompiledObject | null {
  let known = compiled.get(raw);
  if (known === undefined) {
    known = compile(raw);
    compiled.set(raw, known);
  }
  return known;
}

/** Whether the checks render makes could find a problem in the object made of these strings. */
function mayHaveProblems(c: CompiledObject, strings: readonly string[], place: Placement): boolean {
  if (!c.fixedOk) return true;
  // A token string that renders blank (emptyTokenProblems).
  for (const s of strings) if (s.trim() === '') return true;
  // Another namespace named (namespaceProblems).
  const namespace = c.namespace === undefined ? '' : textOf(c.namespace, strings);
  if (namespace !== '' && namespace !== place.namespace) return true;
  // A name or label value that is invalid once its tokens are replaced (renderedObjectProblems).
  if (typeof c.name === 'number' && !nameOk(c.nameRule, c.groupKind, strings[c.name]!)) return true;
  for (const i of c.labelStrings) if (labelValueErrors(strings[i]!).length > 0) return true;
  return false;
}

/**
 * The object rendered and placed, or undefined when a check might refuse it: the caller then
 * renders it the plain way, which finds and words the problem (or finds none and renders it).
 */
export function renderCompiled(c: CompiledObject, values: TokenValues, place: Placement): KubeObject | undefined {
  const strings = c.strings.map((make) => make(values));
  if (mayHaveProblems(c, strings, place)) return undefined;
  return c.build(strings, place) as KubeObject;
}
