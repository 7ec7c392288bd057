// bin/furnish.js as a user runs it, in a process of its own: the other CLI suites run the commands
// in-process (runCli with injected IO); these few cases show that the real entry gives the same
// output and exit code, reads stdin and the environment, and prints user errors without a trace.
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expectUserError, root, runFurnish, spawnFurnish, type Run } from './spawn.ts';

const CAPTURE = join(root, 'test', 'fixtures', 'kube-apiserver-1.26', 'admission', '001-mutate-CREATE-namespaces-team-a-alice.json');

/** Spawned, then in-process: the same status, stdout and stderr. */
async function both(args: string[], input?: string, env?: Record<string, string>): Promise<Run> {
  const spawned = spawnFurnish(args, input, env);
  expect(spawned).toEqual(await runFurnish(args, input, env));
  return spawned;
}

describe('bin/furnish.js end to end', () => {
  it('--help lists the commands and exits 0', async () => {
    const run = await both(['--help']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^Usage: furnish <command> \[options\]/);
    expect(run.stdout).toMatch(/^ {2}render\s/m);
  });

  it('renders the examples for a namespace', async () => {
    const run = await both(['render', '--templates', 'examples', '-n', 'team-a', '--creator', 'alice']);
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/^# ApplySet parent/);
    expect(run.stdout).toContain('namespace: team-a');
  });

  it('answers an AdmissionReview read from stdin', async () => {
    const review = JSON.stringify((JSON.parse(readFileSync(CAPTURE, 'utf8')) as { review: unknown }).review);
    const run = await both(['admit', '-w', 'mutate-namespace', '-r', '-'], review);
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ kind: 'AdmissionReview', response: { allowed: true, patchType: 'JSONPatch' } });
  });

  it('reads the environment: webhooks --credential-env', async () => {
    const credential = 'k'.repeat(48);
    const run = await both(['webhooks', '--url', 'https://f.example.com', '--cluster', 'c1', '--credential-env', 'SMOKE_CRED'], undefined, { SMOKE_CRED: credential });
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`https://f.example.com/mutate-namespace/c/c1/${credential}`);
  });

  it('a user error: one line on stderr, exit 2, no stack trace', async () => {
    expectUserError(await both(['validate', '--templates', 'no/such/dir']), /^no\/such\/dir: no such file or directory\n1 problem found\n$/, 1);
  });
});
