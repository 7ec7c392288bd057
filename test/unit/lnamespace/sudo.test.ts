// kubectl sudo: the argument decisions on their own, and the plugin as a process in front of a
// stand-in kubectl that records what it was asked (the real thing runs in test/integration).
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { lnamespaceQuery, parseSudoArgs, selfImpersonationQuery, sudoCommand, sudoIdentity, sudoTarget, SudoUsageError, whoamiFailure } from '../../../shared/lnamespace/sudo.ts';

const GROUP = 'furnish:sudoers:shop:uid-1';
const STAND_IN = 'furnish:sudo:shop:uid-1';

describe('parseSudoArgs', () => {
  it('finds the namespace in every spelling, and stops at --', () => {
    for (const args of [['get', 'pods', '-n', 'shop'], ['-n=shop', 'get', 'pods'], ['get', 'pods', '-nshop'], ['--namespace', 'shop', 'get', 'pods'], ['get', '--namespace=shop', 'pods']]) {
      expect(parseSudoArgs(args).namespace).toBe('shop');
    }
    expect(parseSudoArgs(['exec', 'web', '--', 'ls', '-n', 'x']).namespace).toBeUndefined();
  });

  it('`kubectl sudo !!`: a leading kubectl (or a path to it) is dropped', () => {
    expect(parseSudoArgs(['kubectl', 'delete', 'quota', 'q', '-n', 'shop']).command).toEqual(['delete', 'quota', 'q', '-n', 'shop']);
    expect(parseSudoArgs(['/usr/local/bin/kubectl', 'get', 'pods']).command).toEqual(['get', 'pods']);
  });

  it('connection flags after sudo are found, for whoami and the context\'s namespace, and stay in the command', () => {
    const args = parseSudoArgs(['--context', 'carol', '--kubeconfig=/k', 'get', 'pods', '--insecure-skip-tls-verify', '-s', 'https://x']);
    expect(args.connection).toEqual(['--context=carol', '--kubeconfig=/k', '--insecure-skip-tls-verify', '-s=https://x']);
    expect(args.command).toEqual(['--context', 'carol', '--kubeconfig=/k', 'get', 'pods', '--insecure-skip-tls-verify', '-s', 'https://x']);
  });

  it('usage errors: nothing to run, a flag without its value, impersonation flags of its own', () => {
    expect(() => parseSudoArgs([])).toThrow(SudoUsageError);
    expect(() => parseSudoArgs(['kubectl'])).toThrow(/^usage: kubectl sudo/);
    // Asked for, the usage is help, not an error (kubectl-sudo prints it to stdout and exits 0).
    expect(() => parseSudoArgs(['--help'])).toThrow(expect.objectContaining({ help: true }));
    expect(() => parseSudoArgs([])).toThrow(expect.objectContaining({ help: false }));
    expect(() => parseSudoArgs(['get', 'pods', '-n'])).toThrow('flag -n needs a value');
    expect(() => parseSudoArgs(['get', 'pods', '--as=bob'])).toThrow('kubectl sudo sets --as, --as-group, --as-uid itself; remove --as from the command');
  });

  it('the command runs as me plus the LNamespace\'s sudoers group', () => {
    expect(sudoCommand(parseSudoArgs(['kubectl', 'delete', 'quota', 'q', '-n', 'shop']), 'carol', GROUP)).toEqual(['--as', 'carol', '--as-group', GROUP, 'delete', 'quota', 'q', '-n', 'shop']);
  });

  it('the group and stand-in come from the LNamespace\'s status, never from the namespace\'s name; each failure says why (issue 25, finding 4)', () => {
    expect(lnamespaceQuery('shop')).toEqual(['get', 'lnamespaces.furnish.dev', 'shop', '-o', 'json']);
    const lns = { metadata: { name: 'shop', uid: 'uid-1' }, status: { sudo: { group: GROUP, standIn: STAND_IN } } };
    expect(sudoTarget('shop', { ok: true, out: JSON.stringify(lns), err: '' })).toEqual({ group: GROUP, standIn: STAND_IN });
    expect(sudoTarget('ops', { ok: false, out: '', err: 'Error from server (NotFound): lnamespaces.furnish.dev "ops" not found\n' })).toBe('kubectl sudo: namespace "ops" has no LNamespace: kubectl sudo elevates only inside an LNamespace\'s namespace (Error from server (NotFound): lnamespaces.furnish.dev "ops" not found)');
    expect(sudoTarget('shop', { ok: false, out: '', err: 'Error from server (Forbidden): lnamespaces.furnish.dev "shop" is forbidden: User "bob" cannot get resource "lnamespaces"' })).toBe('kubectl sudo: cannot read LNamespace "shop" to find its sudoers group: Error from server (Forbidden): lnamespaces.furnish.dev "shop" is forbidden: User "bob" cannot get resource "lnamespaces"');
    expect(sudoTarget('shop', { ok: true, out: JSON.stringify({ metadata: { name: 'shop' }, status: {} }), err: '' })).toMatch(/^kubectl sudo: LNamespace "shop" names no sudoers group yet \(status.sudo\)/);
    expect(sudoTarget('shop', { ok: true, out: 'not json', err: '' })).toMatch(/did not answer JSON/);
  });

  it('acts as yourself when you may impersonate yourself, else as the stand-in of a Group sudoer\'s members, else as yourself (the API server refuses you by name)', () => {
    expect(sudoIdentity('carol', STAND_IN, { self: true, standIn: true })).toBe('carol');
    expect(sudoIdentity('bob', STAND_IN, { self: false, standIn: true })).toBe(STAND_IN);
    expect(sudoIdentity('dave', STAND_IN, { self: false, standIn: false })).toBe('dave');
  });

  it('asks about yourself the way the API server will check it: a ServiceAccount as serviceaccounts/<name> in its namespace', () => {
    expect(selfImpersonationQuery('carol')).toEqual(['auth', 'can-i', 'impersonate', 'users/carol']);
    expect(selfImpersonationQuery('system:serviceaccount:tools:ci')).toEqual(['auth', 'can-i', 'impersonate', 'serviceaccounts/ci', '-n', 'tools']);
  });

  it('whoami failing because SelfSubjectReview is not served: the message names the fix', () => {
    expect(whoamiFailure('error: the server doesn\'t have a resource type "selfsubjectreviews"')).toMatch(/does not serve SelfSubjectReview[\s\S]*KUBECTL_SUDO_USER=<your user name>/);
    expect(whoamiFailure('Unable to connect to the server: dial tcp')).toBe('kubectl sudo: `kubectl auth whoami` failed: Unable to connect to the server: dial tcp');
  });
});

describe('bin/kubectl-sudo as a process', () => {
  const plugin = join(import.meta.dirname, '..', '..', '..', 'bin', 'kubectl-sudo');
  let dir: string;
  let fake: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kubectl-sudo-'));
    fake = join(dir, 'kubectl');
    // Records each call; answers whoami and config view as $WHOAMI / $CTXNS say, the LNamespace unless $NO_LNS; exits 7 on the real command.
    writeFileSync(fake, `#!/bin/sh
echo "$*" >> "${dir}/calls"
case "$*" in
  *"auth whoami"*) [ -n "$WHOAMI_ERR" ] && { echo "$WHOAMI_ERR" >&2; exit 1; }; printf %s "$WHOAMI"; exit 0 ;;
  *"config view"*) printf %s "$CTXNS"; exit 0 ;;
  *"get lnamespaces.furnish.dev"*) [ -n "$NO_LNS" ] && { echo 'Error from server (NotFound): lnamespaces.furnish.dev "x" not found' >&2; exit 1; }; printf '%s' '{"status":{"sudo":{"group":"${GROUP}","standIn":"${STAND_IN}"}}}'; exit 0 ;;
  *"can-i impersonate users/${STAND_IN}"*) [ -n "$STANDIN_OK" ] && { echo yes; exit 0; }; echo no; exit 1 ;;
  *"can-i impersonate"*) [ -n "$SELF_OK" ] && { echo yes; exit 0; }; echo no; exit 1 ;;
esac
echo 'Error from server (Forbidden): refused as is' >&2
exit 7
`);
    chmodSync(fake, 0o755);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const runPlugin = (args: string[], env: Record<string, string>) => new Promise<{ code: number; stderr: string; calls: string[] }>((resolve) => {
    rmSync(join(dir, 'calls'), { force: true });
    execFile(plugin, args, { env: { ...process.env, KUBECTL: fake, ...env } }, (error, _stdout, stderr) => {
      let calls: string[] = [];
      try {
        calls = readFileSync(join(dir, 'calls'), 'utf8').trim().split('\n');
      } catch { /* no call made */ }
      resolve({ code: error ? Number(error.code) : 0, stderr, calls });
    });
  });

  it('asks whoami, the context\'s namespace and its LNamespace with the connection flags, then runs the command; the refusal and exit code pass through', async () => {
    const r = await runPlugin(['kubectl', '--context', 'carol', 'delete', 'quota', 'q'], { WHOAMI: 'carol', CTXNS: 'shop', SELF_OK: '1' });
    expect(r.calls).toEqual([
      '--context=carol auth whoami -o jsonpath={.status.userInfo.username}',
      '--context=carol config view --minify -o jsonpath={.contexts[0].context.namespace}',
      '--context=carol get lnamespaces.furnish.dev shop -o json',
      '--context=carol auth can-i impersonate users/carol',
      `--as carol --as-group ${GROUP} --context carol delete quota q`,
    ]);
    expect(r.code).toBe(7);
    expect(r.stderr).toBe('Error from server (Forbidden): refused as is\n');
  });

  it('no SelfSubjectReview: a clear error and nothing run; KUBECTL_SUDO_USER is the way around it', async () => {
    const r = await runPlugin(['get', 'pods', '-n', 'shop'], { WHOAMI_ERR: 'error: the server doesn\'t have a resource type "selfsubjectreviews"' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^kubectl sudo: cannot tell who you are: this API server does not serve SelfSubjectReview/);
    expect(r.calls).toHaveLength(1);
    const named = await runPlugin(['get', 'pods', '-n', 'shop'], { KUBECTL_SUDO_USER: 'carol', SELF_OK: '1' });
    expect(named.calls).toEqual(['get lnamespaces.furnish.dev shop -o json', 'auth can-i impersonate users/carol', `--as carol --as-group ${GROUP} get pods -n shop`]);
  });

  it('a member of a Group sudoer, who may not impersonate herself, acts as the LNamespace\'s stand-in', async () => {
    const r = await runPlugin(['get', 'pods', '-n', 'shop'], { WHOAMI: 'bob', STANDIN_OK: '1' });
    expect(r.calls.slice(2)).toEqual(['auth can-i impersonate users/bob', `auth can-i impersonate users/${STAND_IN}`, `--as ${STAND_IN} --as-group ${GROUP} get pods -n shop`]);
    const nobody = await runPlugin(['get', 'pods', '-n', 'shop'], { WHOAMI: 'dave' });
    expect(nobody.calls.at(-1)).toBe(`--as dave --as-group ${GROUP} get pods -n shop`);
  });

  it('a namespace without an LNamespace: a clear error, exit 1, and no impersonation tried (the seed guessed <namespace>-sudoers)', async () => {
    const r = await runPlugin(['get', 'pods', '-n', 'ops'], { WHOAMI: 'mallory', NO_LNS: '1', SELF_OK: '1' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^kubectl sudo: namespace "ops" has no LNamespace/);
    expect(r.calls).toEqual(['auth whoami -o jsonpath={.status.userInfo.username}', 'get lnamespaces.furnish.dev ops -o json']);
  });

  it('a usage error exits 2 without calling kubectl', async () => {
    const r = await runPlugin([], {});
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^usage: kubectl sudo/);
    expect(r.calls).toEqual([]);
  });
});
