// Quantities as kube-apiserver stores them: parsed (resource.ParseQuantity), rounded up to milli
// (SetDefaults_ResourceList: every ResourceList of core/v1) and written back in canonical form
// (Quantity.CanonicalizeBytes), so `1000m` is stored as `1`, `1024Mi` as `1Gi`, `0.5` as `500m`,
// `0.25Gi` as `256Mi`, `0.0001` as `1m`, `1e3` stays `1e3`, for the ResourceLists of the kinds
// Furnish's templates carry; a value that is not a quantity is left alone. The reconciler uses it
// to predict what the server stores (reconcile/observed.ts), kube-sim to store it; a fidelity test
// holds it to the real server's answers.
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

/** Replaces every quantity in a ResourceList (a map of resource name → quantity). */
function normaliseList(list: unknown): void {
  if (!isRecord(list)) return;
  for (const [k, v] of Object.entries(list)) {
    const canonical = typeof v === 'string' || typeof v === 'number' ? canonicalQuantity(String(v)) : null;
    if (canonical !== null) list[k] = canonical;
  }
}

function containerResources(podSpec: unknown): void {
  if (!isRecord(podSpec)) return;
  for (const field of ['containers', 'initContainers', 'ephemeralContainers']) {
    for (const c of Array.isArray(podSpec[field]) ? podSpec[field] : []) {
      if (!isRecord(c) || !isRecord(c.resources)) continue;
      normaliseList(c.resources.limits);
      normaliseList(c.resources.requests);
    }
  }
  normaliseList(podSpec.overhead);
}

const at = (o: unknown, ...path: string[]): unknown => path.reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), o);

/** The ResourceLists of each kind a template is likely to hold. */
const BY_KIND: Record<string, (obj: Json) => void> = {
  'v1/ResourceQuota': (o) => {
    normaliseList(at(o, 'spec', 'hard'));
    normaliseList(at(o, 'status', 'hard'));
    normaliseList(at(o, 'status', 'used'));
  },
  'v1/LimitRange': (o) => {
    const limits = at(o, 'spec', 'limits');
    for (const l of Array.isArray(limits) ? limits : []) for (const f of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio']) normaliseList(at(l, f));
  },
  'v1/PersistentVolumeClaim': (o) => {
    normaliseList(at(o, 'spec', 'resources', 'requests'));
    normaliseList(at(o, 'spec', 'resources', 'limits'));
  },
  'v1/Pod': (o) => containerResources(o.spec),
};
for (const kind of ['Deployment', 'StatefulSet', 'DaemonSet', 'ReplicaSet']) BY_KIND[`apps/${kind}`] = (o) => containerResources(at(o, 'spec', 'template', 'spec'));
BY_KIND['batch/Job'] = (o) => containerResources(at(o, 'spec', 'template', 'spec'));
BY_KIND['batch/CronJob'] = (o) => containerResources(at(o, 'spec', 'jobTemplate', 'spec', 'template', 'spec'));

/** Normalises, in place, the quantities of an object of a built-in kind (`group` '' for core). */
export function normaliseQuantities(group: string, kind: string, obj: Json): void {
  BY_KIND[`${group || 'v1'}/${kind}`]?.(obj);
}
