// Quantities as kube-apiserver stores them: parsed (resource.ParseQuantity), rounded up to milli
// (SetDefaults_ResourceList: every ResourceList of core/v1) and written back in canonical form
// (Quantity.CanonicalizeBytes), so `1000m` is stored as `1`, `1024Mi` as `1Gi`, `0.5` as `500m`,
// `0.25Gi` as `256Mi`, `0.0001` as `1m`, `1e3` stays `1e3`, for the ResourceLists of the kinds
// Furnish's templates carry; a value that is not a quantity is left alone. kube-sim stores
// quantities so; a fidelity test holds it to the real server's answers.
const QUANTITY = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei)|(n|u|m|k|M|G|T|P|E))?$/;
const BINARY: Record<string, number> = { Ki: 1, Mi: 2, Gi: 3, Ti: 4, Pi: 5, Ei: 6 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DECIMAL_SUFFIX = Object.fromEntries(Object.entries(DECIMAL).map(([s, e]) => [e, s])) as Record<number, string>;

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';
type Format = QuantityFormat;

const pow10 = (n: number): bigint => 10n ** BigInt(n);

/** A quantity as the server holds it: its value in milli units and the format its suffix implies. */
export interface ParsedQuantity {
  milli: bigint;
  format: Format;
}

/** The value in milli units, rounded up (away from zero), and the format its suffix implies. */
export function parseQuantity(text: string): ParsedQuantity | null {
  const m = QUANTITY.exec(text.trim());
  if (!m) return null;
  const [, sign, number, exponent, binary, decimal] = m;
  const [whole = '', fraction = ''] = number!.split('.');
  let digits = BigInt(`${whole}${fraction}` || '0');
  let scale = -fraction.length + 3;
  let format: Format = 'DecimalSI';
  let factor = 1n;
  if (exponent) {
    scale += Number(exponent.slice(1));
    format = 'DecimalExponent';
  } else if (binary) {
    factor = 1024n ** BigInt(BINARY[binary]!);
    format = 'BinarySI';
  } else scale += DECIMAL[decimal ?? '']!;
  digits *= factor;
  let milli: bigint;
  if (scale >= 0) milli = digits * pow10(scale);
  else {
    const d = pow10(-scale);
    milli = digits / d + (digits % d === 0n ? 0n : 1n);
  }
  return { milli: sign === '-' ? -milli : milli, format };
}

/** Mantissa and a power-of-ten exponent that is a multiple of 3, trailing zeros moved into it. */
function decimalParts(milli: bigint): { mantissa: bigint; exponent: number } {
  let mantissa = milli;
  let exponent = -3;
  while (mantissa !== 0n && mantissa % 10n === 0n) {
    mantissa /= 10n;
    exponent += 1;
  }
  const r = ((exponent % 3) + 3) % 3;
  return { mantissa: mantissa * pow10(r), exponent: exponent - r };
}

function binaryParts(value: bigint): { mantissa: bigint; power: number } {
  let mantissa = value;
  let power = 0;
  while (power < 6 && mantissa % 1024n === 0n) {
    mantissa /= 1024n;
    power += 1;
  }
  return { mantissa, power };
}

export function canonicalQuantity(text: string): string | null {
  const q = parseQuantity(text);
  return q && formatQuantity(q);
}

/** Quantity.String(): the canonical text of a value in the given format (kube-sim's quota sums use it). */
export function formatQuantity(q: ParsedQuantity): string {
  if (q.milli === 0n) return '0';
  const ONE = 1000n;
  let format = q.format;
  // BinarySI below 1024, or with a fraction, is shown as DecimalSI rather than rounded.
  if (format === 'BinarySI' && ((q.milli > -1024n * ONE && q.milli < 1024n * ONE) || q.milli % ONE !== 0n)) format = 'DecimalSI';
  if (format === 'BinarySI') {
    const { mantissa, power } = binaryParts(q.milli / ONE);
    return `${mantissa}${power === 0 ? '' : Object.keys(BINARY)[power - 1]}`;
  }
  const { mantissa, exponent } = decimalParts(q.milli);
  if (format === 'DecimalExponent') return `${mantissa}${exponent === 0 ? '' : `e${exponent}`}`;
  const suffix = DECIMAL_SUFFIX[exponent];
  return suffix === undefined ? `${mantissa}e${exponent}` : `${mantissa}${suffix}`;
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const records = (list: unknown): [Json, string, unknown][] => (isRecord(list) ? Object.entries(list).map(([k, v]) => [list, k, v]) : []);

/** The quantities of a pod spec's containers, and its overhead. */
function containerLists(podSpec: unknown): unknown[] {
  if (!isRecord(podSpec)) return [];
  const lists: unknown[] = [podSpec.overhead];
  for (const field of ['containers', 'initContainers', 'ephemeralContainers']) {
    for (const c of Array.isArray(podSpec[field]) ? podSpec[field] : []) if (isRecord(c) && isRecord(c.resources)) lists.push(c.resources.limits, c.resources.requests);
  }
  return lists;
}

const at = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), o);

/** The ResourceLists (maps of resource name → quantity) of each kind a template is likely to hold. */
const LISTS_BY_KIND: Record<string, (obj: Json) => unknown[]> = {
  'v1/ResourceQuota': (o) => [at(o, 'spec', 'hard'), at(o, 'status', 'hard'), at(o, 'status', 'used')],
  'v1/LimitRange': (o) => {
    const limits = at(o, 'spec', 'limits');
    return (Array.isArray(limits) ? limits : []).flatMap((l) => ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'].map((f) => at(l, f)));
  },
  'v1/PersistentVolumeClaim': (o) => [at(o, 'spec', 'resources', 'requests'), at(o, 'spec', 'resources', 'limits')],
  'v1/Pod': (o) => containerLists(o.spec),
};
for (const kind of ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']) LISTS_BY_KIND[`apps/${kind}`] = (o) => containerLists(at(o, 'spec', 'template', 'spec'));
LISTS_BY_KIND['batch/Job'] = (o) => containerLists(at(o, 'spec', 'template', 'spec'));
LISTS_BY_KIND['batch/CronJob'] = (o) => containerLists(at(o, 'spec', 'jobTemplate', 'spec', 'template', 'spec'));

/** Every quantity of an object of a built-in kind (`group` '' for core): the map holding it, its key, its value. */
function quantitiesOf(group: string, kind: string, obj: Json): [Json, string, unknown][] {
  return (LISTS_BY_KIND[`${group || 'v1'}/${kind}`]?.(obj) ?? []).flatMap(records);
}

const quantityText = (v: unknown): string | null => (typeof v === 'string' || typeof v === 'number' ? String(v) : null);

/** Normalises, in place, the quantities of an object of a built-in kind (`group` '' for core). */
export function normaliseQuantities(group: string, kind: string, obj: Json): void {
  for (const [list, key, value] of quantitiesOf(group, kind, obj)) {
    const text = quantityText(value);
    const canonical = text === null ? null : canonicalQuantity(text);
    if (canonical !== null) list[key] = canonical;
  }
}

/**
 * Whether a quantity of the object does not parse: the API server cannot decode it (a create or an
 * update: 400; a server-side apply: 500, "failed to convert new object"; a patch: 422).
 */
export function hasInvalidQuantity(group: string, kind: string, obj: Json): boolean {
  return quantitiesOf(group, kind, obj).some(([, , value]) => {
    const text = quantityText(value);
    return text !== null && canonicalQuantity(text) === null;
  });
}

