// Jest globalSetup: one temporary folder per run. Every suite, and every process a suite starts
// (kube-sim, npm start's stack, kubectl, terraform), finds os.tmpdir() there through TMPDIR, and
// globalTeardown (tmpdir-teardown.js) removes it: a run no longer leaves hundreds of folders and
// billing files in /tmp.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup() {
  process.env.FURNISH_TEST_RUN_TMPDIR = mkdtempSync(join(tmpdir(), 'furnish-jest-'));
  process.env.TMPDIR = process.env.FURNISH_TEST_RUN_TMPDIR;
}
