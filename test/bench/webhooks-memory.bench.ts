// `npm run bench -- webhooks-memory` (also run by `npm run bench -- webhooks`): what an
// AdmissionReview of the API server's largest size costs a webhook function in memory, by shape
// (issue 25, finding 11). Each shape is a 3 MiB review (kube-apiserver's request body limit) to
// protect-objects, a tenant's UPDATE of a template's object, with the bulk in the object and the
// old object, or in a field no decoder knows. Per shape: the serving process's peak RSS above its
// RSS before, for one review and for 32 at once (then also the peak itself), beside a baseline
// served by the same functions framework that echoes a constant answer after the framework has
// parsed the body (plain JSON.parse). Each (function, shape) gets a fresh process.
// Target: 32 concurrent reviews of every shape peak under 75 % of the deployed memory
// (terraform/variables.tf webhook.memory, 256 MiB: 192 MiB), which is what the webhook
// concurrency in terraform/main.tf is set from.
import { request } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { buildFunction } from '../../scripts/build.ts';
import { admissionFixture, mintToken, SCENARIO_TEMPLATES, testEnv } from '../support/fixtures.ts';
import { startFakeApiServer } from '../functions/fake-api-server.ts';
import { canMeasureProcessMemory, resetPeak, startServingProcess, statusKb, type ServingProcess } from '../functions/serving-process.ts';
import { writeBaseline } from './webhook-serving.ts';
import { MAX_BODY_DEPTH, MAX_BODY_VALUES } from '../../shared/admission/scan.ts';
import { DEFAULT_MEMORY_BUDGET } from '../../shared/webhooks/http.ts';
import { WEBHOOK_CONCURRENCY, WEBHOOK_MEMORY_MIB, WEBHOOK_NODE_FLAGS } from '../../shared/webhooks/memory-budget.ts';

const root = join(import.meta.dirname, '..', '..');
const MiB = 1024 * 1024;
/** kube-apiserver refuses request bodies over 3 MiB: no review it sends is much larger. */
const REVIEW_BYTES = 3 * MiB;
const CONCURRENT = WEBHOOK_CONCURRENCY;
const DEPLOYED_MIB = WEBHOOK_MEMORY_MIB;
const HEADROOM = 0.25;
const WEBHOOK = 'protect-objects';

type Placement = 'halves' | 'unknown-field';

interface Shape {
  name: string;
  /** The JSON text of `bytes` bytes (about) of this shape. */
  fill(bytes: number): string;
  placement: Placement;
}

function repeatTo(open: string, unit: string, close: string, bytes: number): string {
  const count = Math.max(1, Math.floor((bytes - open.length - close.length + 1) / unit.length));
  return open + unit.repeat(count).slice(0, -1) + close;
}

function manyKeys(bytes: number): string {
  const parts: string[] = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const entry = `"k${i.toString(36)}":""`;
    parts.push(entry);
    size += entry.length + 1;
  }
  return `{${parts.join(',')}}`;
}

/** `count` copies of `unit` in an array, then one string padding it to `bytes`: the most values the limit lets through. */
function atLimit(unit: string, count: number): (bytes: number) => string {
  return (bytes) => {
    const items = `[${unit.repeat(count).slice(0, -1)}`;
    return `${items},"${'x'.repeat(Math.max(0, bytes - items.length - 4))}"]`;
  };
}

/** Values per half at the limit, leaving room for the review's own (~150). */
const HALF_LIMIT = Math.floor((MAX_BODY_VALUES - 1_000) / 2);

const SHAPES: Shape[] = [
  { name: 'deep arrays (unknown field)', placement: 'unknown-field', fill: (n) => '['.repeat(n / 2) + ']'.repeat(n / 2) },
  { name: 'deep objects (in object)', placement: 'halves', fill: (n) => '{"a":'.repeat(n / 6) + '0' + '}'.repeat(n / 6) },
  { name: 'many small keys', placement: 'halves', fill: manyKeys },
  { name: 'long strings', placement: 'halves', fill: (n) => `"${'x'.repeat(n - 2)}"` },
  { name: 'long two-byte strings', placement: 'halves', fill: (n) => `"${'é'.repeat((n - 2) / 2)}"` },
  { name: 'many array elements', placement: 'halves', fill: (n) => repeatTo('[', '0,', ']', n) },
  { name: 'many empty objects', placement: 'halves', fill: (n) => repeatTo('[', '{},', ']', n) },
  // What the value limit lets through, the rest of the 3 MiB a long string.
  { name: 'small keys, at the limit', placement: 'halves', fill: atLimit('{"k":""},', HALF_LIMIT / 2) },
  { name: 'elements, at the limit', placement: 'halves', fill: atLimit('0,', HALF_LIMIT) },
  { name: 'empty objects, at the limit', placement: 'halves', fill: atLimit('{},', HALF_LIMIT) },
  { name: 'deep arrays, at the limit', placement: 'halves', fill: atLimit(`${'['.repeat(95)}${']'.repeat(95)},`, Math.floor(HALF_LIMIT / 95)) },
];

/** A review of exactly REVIEW_BYTES bytes with the shape in it. */
function reviewBody(shape: Shape): Buffer {
  const review = structuredClone(admissionFixture('034-protect-UPDATE-networkpolicies-default-deny-alice').review) as unknown as { request: Record<string, { spec?: Record<string, unknown> }> };
  const marks = shape.placement === 'halves' ? ['"@OBJECT@"', '"@OLD@"'] : ['"@UNKNOWN@"'];
  if (shape.placement === 'halves') {
    review.request.object!.spec!.bench = '@OBJECT@';
    review.request.oldObject!.spec!.bench = '@OLD@';
  } else (review.request as Record<string, unknown>).bench = '@UNKNOWN@';
  let text = JSON.stringify(review);
  const share = Math.floor((REVIEW_BYTES - Buffer.byteLength(text) - 16) / marks.length);
  for (const mark of marks) text = text.replace(mark, shape.fill(share));
  const pad = REVIEW_BYTES - Buffer.byteLength(text);
  return Buffer.from(pad > 0 ? text + ' '.repeat(pad) : text);
}

interface Answer {
  /** The HTTP status, or for an AdmissionReview `allowed` or `denied <code>`. */
  status: number | string;
  ms: number;
}

function outcome(status: number, text: string): number | string {
  if (status !== 200 || !text.startsWith('{"apiVersion"')) return status;
  const { response } = JSON.parse(text) as { response: { allowed: boolean; status?: { code?: number } } };
  return response.allowed ? 'allowed' : `denied ${response.status?.code ?? 403}`;
}

function post(url: string, body: Buffer, token: string): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    const headers = { 'content-type': 'application/json', 'content-length': String(body.length), authorization: `Bearer ${token}` };
    let answered = false;
    const req = request(`${url}?timeout=3s`, { method: 'POST', headers, agent: false }, (res) => {
      answered = true;
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: outcome(res.statusCode ?? 0, text), ms: performance.now() - started }));
    });
    // A refusal may close the connection before the body is all sent: the answer counts, not the error.
    req.on('error', () => (answered ? undefined : resolve({ status: 0, ms: performance.now() - started })));
    req.end(body);
  });
}

/** Peak RSS above RSS before, and the peak itself; undefined when the process died (out of memory). */
interface Phase {
  extraMiB?: number;
  peakMiB?: number;
  answers: Answer[];
}

interface Measured {
  idleMiB: number;
  one: Phase;
  many: Phase;
}

const alive = (pid: number) => existsSync(`/proc/${pid}/status`);

async function peakOf(served: ServingProcess, run: () => Promise<Answer[]>): Promise<Phase> {
  if (!alive(served.pid)) return { answers: await run() };
  const before = statusKb(served.pid, 'VmRSS');
  if (!resetPeak(served.pid)) throw new Error('cannot reset the peak RSS (/proc/<pid>/clear_refs)');
  const answers = await run();
  await new Promise((r) => setTimeout(r, 100));
  if (!alive(served.pid)) return { answers };
  const peak = statusKb(served.pid, 'VmHWM');
  return { extraMiB: (peak - before) / 1024, peakMiB: peak / 1024, answers };
}

async function measure(start: () => Promise<ServingProcess>, body: Buffer, token: string): Promise<Measured> {
  const served = await start();
  try {
    // One small warm-up call: the first call's code loading is not the review's cost.
    await post(served.url, Buffer.from(JSON.stringify(admissionFixture('034-protect-UPDATE-networkpolicies-default-deny-alice').review)), token);
    await new Promise((r) => setTimeout(r, 200));
    const idleMiB = statusKb(served.pid, 'VmRSS') / 1024;
    const one = await peakOf(served, async () => [await post(served.url, body, token)]);
    await new Promise((r) => setTimeout(r, 300));
    const many = await peakOf(served, () => Promise.all(Array.from({ length: CONCURRENT }, () => post(served.url, body, token))));
    return { idleMiB, one, many };
  } finally {
    await served.stop();
  }
}

function statuses(answers: Answer[]): string {
  const counts = new Map<number | string, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts].map(([s, n]) => `${s}×${n}`).join(' ');
}

const mb = (v: number | undefined) => (v === undefined ? '  DIED  ' : `${v.toFixed(0).padStart(4)} MiB`);

async function main(): Promise<void> {
  console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
  if (!canMeasureProcessMemory) return void console.log('(no /proc here: not measured)');
  mkdirSync(join(root, 'dist'), { recursive: true });
  const work = mkdtempSync(join(root, 'dist', 'bench-memory-'));
  const api = await startFakeApiServer(SCENARIO_TEMPLATES);
  try {
    // Both functions run with the webhooks' deployed Node flags (terraform/main.tf), whatever this host's memory.
    const nodeOptions = process.env.BENCH_WEBHOOK_NODE_OPTIONS ?? WEBHOOK_NODE_FLAGS.join(' ');
    const env = testEnv({ FURNISH_API_SERVER: api.url, NODE_OPTIONS: nodeOptions });
    console.log(`NODE_OPTIONS=${nodeOptions}; memory budget ${DEFAULT_MEMORY_BUDGET / MiB} MiB; body limits: ${MAX_BODY_VALUES} values, ${MAX_BODY_DEPTH} levels`);
    const token = await mintToken();
    const baseline = writeBaseline(work);
    const bundle = (await buildFunction(WEBHOOK, join(work, 'dist'))).dir;
    const limit = DEPLOYED_MIB * (1 - HEADROOM);
    console.log(`\n-- ${REVIEW_BYTES / MiB} MiB reviews to ${WEBHOOK} (bundle, functions framework, NODE_ENV=production), one and ${CONCURRENT} at once; peak RSS above RSS before (VmHWM)`);
    console.log(`${'shape'.padEnd(28)} | ${'baseline (echo) 1×'.padEnd(20)} ${`${CONCURRENT}×`.padEnd(8)} | ${`${WEBHOOK} 1× (answer, time)`.padEnd(30)} ${`${CONCURRENT}×: above, peak, answers, slowest`}`);
    let worstPeak = 0;
    let worstShape = '';
    let idle = 0;
    const wanted = process.env.BENCH_WEBHOOK_SHAPES?.split(',');
    for (const shape of SHAPES.filter((x) => !wanted || wanted.some((w) => x.name.includes(w)))) {
      const body = reviewBody(shape);
      const base = await measure(() => startServingProcess('baseline', env, baseline), body, token);
      const hook = await measure(() => startServingProcess(WEBHOOK, env, bundle), body, token);
      idle = Math.max(idle, hook.idleMiB);
      // A process that died was over whatever it had.
      const peak = hook.many.peakMiB ?? Infinity;
      if (peak > worstPeak) [worstPeak, worstShape] = [peak, shape.name];
      const slowest = Math.max(...hook.many.answers.map((a) => a.ms));
      const one = hook.one.answers[0]!;
      console.log(
        `${shape.name.padEnd(28)} | ${mb(base.one.extraMiB)} ${`(${base.one.answers[0]!.status})`.padEnd(9)} ${mb(base.many.extraMiB)} | ` +
          `${mb(hook.one.extraMiB)} (${one.status}, ${one.ms.toFixed(0)} ms)`.padEnd(30) +
          ` ${mb(hook.many.extraMiB)}, ${mb(hook.many.peakMiB)}, ${statuses(hook.many.answers)}, ${slowest.toFixed(0)} ms  ${peak <= limit ? 'within' : 'OVER'} ${limit} MiB`,
      );
    }
    console.log(`\n${WEBHOOK} idle: ${idle.toFixed(0)} MiB RSS. Worst ${CONCURRENT}× peak: ${worstPeak.toFixed(0)} MiB (${worstShape}) against ${limit} MiB (${DEPLOYED_MIB} MiB less ${HEADROOM * 100} % headroom): ${worstPeak <= limit ? 'met' : 'MISSED'}.`);
  } finally {
    await api.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
