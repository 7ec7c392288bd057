// `kubectl sudo`'s I/O: ask kubectl who the caller is, which namespace the context names, that
// namespace's LNamespace (its status names the sudoers group and stand-in) and whom the caller may
// impersonate (themselves, or the stand-in of a Group sudoer's members), then
// run the command with the sudo flags, its output and exit code passed through unchanged (a
// non-sudoer sees the API server's own refusal). Decisions live in sudo.ts.
import { spawnSync } from 'node:child_process';
import { lnamespaceQuery, parseSudoArgs, selfImpersonationQuery, sudoCommand, sudoIdentity, sudoTarget, SudoUsageError, whoamiFailure } from './sudo.ts';

const kubectl = process.env.KUBECTL ?? 'kubectl';

function ask(args: string[]): { ok: boolean; out: string; err: string } {
  const r = spawnSync(kubectl, args, { encoding: 'utf8' });
  if (r.error) {
    process.stderr.write(`kubectl sudo: cannot run ${kubectl}: ${r.error.message}\n`);
    process.exit(127);
  }
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr };
}

function main(argv: string[]): number {
  let args;
  try {
    args = parseSudoArgs(argv);
  } catch (e) {
    if (!(e instanceof SudoUsageError)) throw e;
    (e.help ? process.stdout : process.stderr).write(`${e.message}\n`);
    return e.help ? 0 : 2;
  }
  let me = process.env.KUBECTL_SUDO_USER ?? '';
  if (!me) {
    const who = ask([...args.connection, 'auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
    if (!who.ok || !who.out) {
      process.stderr.write(`${whoamiFailure(who.err || 'no user name in the answer')}\n`);
      return 1;
    }
    me = who.out;
  }
  let namespace = args.namespace;
  if (namespace === undefined) {
    const ctx = ask([...args.connection, 'config', 'view', '--minify', '-o', 'jsonpath={.contexts[0].context.namespace}']);
    namespace = (ctx.ok && ctx.out) || 'default';
  }
  const target = sudoTarget(namespace, ask([...args.connection, ...lnamespaceQuery(namespace)]));
  if (typeof target === 'string') {
    process.stderr.write(`${target}\n`);
    return 1;
  }
  // Whom to act as: the API server says (SelfSubjectAccessReview) whether you may be yourself or the stand-in.
  const may = (query: string[]) => ask([...args.connection, ...query]).out === 'yes';
  const self = may(selfImpersonationQuery(me));
  const as = sudoIdentity(me, target.standIn, { self, standIn: !self && may(['auth', 'can-i', 'impersonate', `users/${target.standIn}`]) });
  const run = spawnSync(kubectl, sudoCommand(args, as, target.group), { stdio: 'inherit' });
  if (run.error) {
    process.stderr.write(`kubectl sudo: cannot run ${kubectl}: ${run.error.message}\n`);
    return 127;
  }
  return run.status ?? 1;
}

process.exit(main(process.argv.slice(2)));
