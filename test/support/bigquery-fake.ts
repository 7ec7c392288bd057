// A BigQuery REST endpoint on 127.0.0.1 speaking the documented contract of the two calls the
// billing sink makes, so that the real @google-cloud/bigquery client is what the tests exercise:
//   POST /bigquery/v2/projects/{p}/datasets/{d}/tables/{t}/insertAll (tabledata.insertAll):
//     { skipInvalidRows, ignoreUnknownValues, rows: [{ insertId, json }] } →
//     { kind, insertErrors?: [{ index, errors: [{ reason, location, message }] }] }.
//     A row missing a REQUIRED field, with an unknown field, or a value of the wrong type is
//     `invalid`; without skipInvalidRows the other rows of that request come back `stopped` and
//     nothing is stored. insertId de-duplication is best-effort: `forgetInsertIds` turns it off.
//   POST /bigquery/v2/projects/{p}/queries (jobs.query): answered by the test's `onQuery`, in the
//     documented response shape (schema, rows of { f: [{ v }] }, jobComplete).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';

export interface Field {
  name: string;
  type: 'STRING' | 'TIMESTAMP' | 'JSON' | 'INTEGER' | 'BOOLEAN';
  mode: 'REQUIRED' | 'NULLABLE' | 'REPEATED';
}

export interface InsertAllRequest {
  path: string;
  authorization?: string;
  body: { skipInvalidRows?: boolean; ignoreUnknownValues?: boolean; rows: Array<{ insertId?: string; json: Record<string, unknown> }> };
}

export interface QueryRequest {
  query: string;
  useLegacySql?: boolean;
  parameterMode?: string;
  queryParameters?: Array<{ name: string; parameterType: { type: string }; parameterValue: { value: string } }>;
}

export interface FakeBigQuery {
  url: string;
  /** Every stored row, in insertion order (duplicates included when insertIds were forgotten), with its table. */
  stored: Array<{ table: string; insertId?: string; json: Record<string, unknown> }>;
  requests: InsertAllRequest[];
  queries: QueryRequest[];
  /** insertId → how many more times it fails with this transient reason. */
  failTransiently: Map<string, { reason: string; times: number }>;
  /** Model the best-effort nature of insertId de-duplication: store every copy. */
  forgetInsertIds: boolean;
  /** Answers a jobs.query call with rows (objects keyed by column) and their schema. */
  onQuery: (q: QueryRequest) => { schema: Field[]; rows: Array<Record<string, unknown>> };
  /** Table ids that do not exist (terraform not applied): insertAll into them, or a query naming them, is 404 notFound. */
  missingTables: Set<string>;
  /** Fail the next N whole requests with this HTTP status. */
  failRequests: { status: number; times: number };
  /** Forgets every row, request, query, injected failure and insertId. */
  reset(): void;
  stop(): Promise<void>;
}

function valueProblem(f: Field, v: unknown): string | undefined {
  if (typeof v !== 'string') return `Cannot convert value to ${f.type.toLowerCase()}.`;
  if (f.type === 'TIMESTAMP' && Number.isNaN(Date.parse(v))) return `Could not parse '${v}' as a timestamp.`;
  if (f.type === 'JSON') {
    try {
      JSON.parse(v);
    } catch {
      return `Could not parse '${v}' as JSON.`;
    }
  }
  return undefined;
}

function problem(schema: readonly Field[], json: Record<string, unknown>, ignoreUnknown: boolean): { location: string; message: string } | undefined {
  const known = new Set(schema.map((f) => f.name));
  if (!ignoreUnknown) for (const k of Object.keys(json)) if (!known.has(k)) return { location: k, message: 'no such field.' };
  for (const f of schema) {
    const v = json[f.name];
    if (v === undefined || v === null) {
      if (f.mode === 'REQUIRED') return { location: f.name, message: `Missing required field: ${f.name}.` };
      continue;
    }
    if (f.mode === 'REPEATED' && !Array.isArray(v)) return { location: f.name, message: 'Array specified for non-repeated field.' };
    for (const item of f.mode === 'REPEATED' ? (v as unknown[]) : [v]) {
      const message = valueProblem(f, item);
      if (message) return { location: f.name, message };
    }
  }
  return undefined;
}

async function body(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

/** A cell as BigQuery sends it: TIMESTAMP as int64 microseconds (formatOptions.useInt64Timestamp), the rest as strings. */
function cell(f: Field, v: unknown): { v: string | null | Array<{ v: string | null }> } {
  if (v === undefined || v === null) return { v: f.mode === 'REPEATED' ? [] : null };
  if (f.mode === 'REPEATED') return { v: (v as unknown[]).map((item) => cell({ ...f, mode: 'NULLABLE' }, item) as { v: string | null }) };
  if (f.type === 'BOOLEAN') return { v: v ? 'true' : 'false' };
  if (f.type === 'TIMESTAMP') return { v: String(Date.parse(String(v)) * 1000) };
  return { v: typeof v === 'string' ? v : JSON.stringify(v) };
}

/** `schema` is every table's, but for the tables `others` names (by table id) with their own. */
export async function startFakeBigQuery(schema: readonly Field[], others: Record<string, readonly Field[]> = {}): Promise<FakeBigQuery> {
  const server: Server = createServer();
  const fake: FakeBigQuery = {
    url: '',
    stored: [],
    requests: [],
    queries: [],
    failTransiently: new Map(),
    missingTables: new Set(),
    forgetInsertIds: false,
    failRequests: { status: 0, times: 0 },
    onQuery: () => ({ schema: [], rows: [] }),
    stop: () => new Promise<void>((r) => server.close(() => r())),
    reset() {
      fake.stored.length = 0;
      fake.requests.length = 0;
      fake.queries.length = 0;
      fake.failTransiently.clear();
      fake.missingTables.clear();
      fake.forgetInsertIds = false;
      fake.failRequests = { status: 0, times: 0 };
      seenIds.clear();
    },
  };
  const seenIds = new Set<string>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const send = (status: number, payload: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      // BigQuery's answer when a request names a table that does not exist.
      const notFound = (project: string, dataset: string, table: string, where = '') => {
        const message = `Not found: Table ${project}:${dataset}.${table}${where}`;
        send(404, { error: { code: 404, message, errors: [{ message, domain: 'global', reason: 'notFound' }], status: 'NOT_FOUND' } });
      };
      const path = (req.url ?? '').split('?')[0]!;
      if (fake.failRequests.times > 0) {
        fake.failRequests.times -= 1;
        return send(fake.failRequests.status, { error: { code: fake.failRequests.status, message: 'injected', errors: [{ reason: 'backendError', message: 'injected' }] } });
      }
      const insertAll = /^\/bigquery\/v2\/projects\/([^/]+)\/datasets\/([^/]+)\/tables\/([^/]+)\/insertAll$/.exec(path);
      if (req.method === 'POST' && insertAll) {
        const table = insertAll[3]!;
        if (fake.missingTables.has(table)) return notFound(insertAll[1]!, insertAll[2]!, table);
        const b = (await body(req)) as InsertAllRequest['body'];
        fake.requests.push({ path, authorization: req.headers.authorization, body: b });
        if (!Array.isArray(b.rows) || b.rows.length === 0) return send(400, { error: { code: 400, message: 'No rows present in the request.', errors: [{ reason: 'invalid' }] } });
        const errors = new Map<number, { reason: string; location?: string; message: string }>();
        b.rows.forEach((r, index) => {
          const p = problem(others[table] ?? schema, r.json ?? {}, b.ignoreUnknownValues === true);
          if (p) return void errors.set(index, { reason: 'invalid', ...p });
          const fail = r.insertId ? fake.failTransiently.get(r.insertId) : undefined;
          if (fail && fail.times > 0) {
            fail.times -= 1;
            errors.set(index, { reason: fail.reason, message: 'injected transient failure' });
          }
        });
        const invalid = [...errors.values()].some((e) => e.reason === 'invalid');
        if (invalid && !b.skipInvalidRows) b.rows.forEach((_, index) => errors.has(index) || errors.set(index, { reason: 'stopped', message: '' }));
        b.rows.forEach((r, index) => {
          if (errors.has(index)) return;
          // insertIds are a table's own.
          const id = r.insertId && `${table}/${r.insertId}`;
          if (id && seenIds.has(id) && !fake.forgetInsertIds) return;
          if (id) seenIds.add(id);
          fake.stored.push({ table, ...r });
        });
        const insertErrors = [...errors].map(([index, e]) => ({ index, errors: [{ reason: e.reason, location: e.location ?? '', debugInfo: '', message: e.message }] }));
        return send(200, { kind: 'bigquery#tableDataInsertAllResponse', ...(insertErrors.length > 0 ? { insertErrors } : {}) });
      }
      const query = /^\/bigquery\/v2\/projects\/([^/]+)\/queries$/.exec(path);
      if (req.method === 'POST' && query) {
        const q = (await body(req)) as QueryRequest;
        fake.queries.push(q);
        const missing = /`([^.`]+)\.([^.`]+)\.([^.`]+)`/g;
        for (const [, project, dataset, table] of q.query.matchAll(missing)) if (fake.missingTables.has(table!)) return notFound(project!, dataset!, table!, ' was not found in location EU');
        const answer = fake.onQuery(q);
        const fields = answer.schema;
        return send(200, {
          kind: 'bigquery#queryResponse',
          schema: { fields },
          jobReference: { projectId: query[1], jobId: `job-${fake.queries.length}`, location: 'EU' },
          totalRows: String(answer.rows.length),
          rows: answer.rows.map((r) => ({ f: fields.map((f) => cell(f, r[f.name])) })),
          jobComplete: true,
          cacheHit: false,
        });
      }
      send(404, { error: { code: 404, message: `fake BigQuery: no route for ${req.method} ${path}` } });
    })().catch((e: unknown) => res.writeHead(500).end(String(e)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const a = server.address();
  fake.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  return fake;
}
