// Shared by the webhook benches: a function that answers every call with one constant
// AdmissionReview, served by the same functions framework as the webhooks: the floor each
// webhook is measured beside.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { toReview } from '../../shared/admission/response.ts';

/** Writes the baseline function under `dir`; returns its source directory (its target is `baseline`). */
export function writeBaseline(dir: string): string {
  const source = join(dir, 'baseline');
  mkdirSync(source, { recursive: true });
  const constant = JSON.stringify(toReview({ uid: '2095e57a-0119-45fc-ba72-1f1f9ad2a9a9', allowed: true }));
  writeFileSync(
    join(source, 'index.js'),
    `import * as functions from '@google-cloud/functions-framework';\nconst body = ${JSON.stringify(constant)};\nfunctions.http('baseline', (req, res) => { res.status(200).type('application/json').send(body); });\n`,
  );
  writeFileSync(join(source, 'package.json'), JSON.stringify({ type: 'module', main: 'index.js' }));
  return source;
}
