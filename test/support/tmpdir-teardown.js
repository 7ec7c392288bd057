// Jest globalTeardown: removes the run's temporary folder (tmpdir-setup.js).
import { rmSync } from 'node:fs';

export default function teardown() {
  const dir = process.env.FURNISH_TEST_RUN_TMPDIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
