// `kubectl sudo`'s decisions, pure: which arguments are kubectl's connection flags (kubectl
// refuses flags before a plugin's name, so they arrive after `sudo` and must reach every kubectl
// the plugin runs), which namespace the command is for, whom it acts as, and the command line it
// runs in the end, with the sudoers group and stand-in read from the LNamespace's status.

/** Global flags that take a value and say how to reach the cluster and as whom. */
const CONNECTION_FLAGS_WITH_VALUE = new Set([
  '--kubeconfig', '--context', '--cluster', '--user', '--token', '--server', '-s', '--certificate-authority',
  '--client-certificate', '--client-key', '--tls-server-name', '--request-timeout', '--cache-dir', '--username', '--password',
]);
const CONNECTION_FLAGS_BOOLEAN = new Set(['--insecure-skip-tls-verify']);
const IMPERSONATION_FLAGS = ['--as', '--as-group', '--as-uid'];

export interface SudoArgs {
  /** The command to run, as given (leading `kubectl` dropped). */
  command: string[];
  /** Connection flags found in it, for `auth whoami` and `config view`. */
  connection: string[];
  /** From -n/--namespace, when given. */
  namespace?: string;
}

export class SudoUsageError extends Error {
  /** Asked for with -h/--help: the usage goes to stdout and the exit code is 0. */
  readonly help: boolean;

  constructor(message: string, help = false) {
    super(message);
    this.help = help;
  }
}

export const USAGE = [
  'usage: kubectl sudo [kubectl flags] <kubectl command and arguments>',
  '  runs the command as yourself plus the sudoers group of the namespace\'s LNamespace (--as <you> --as-group',
  '  <its status.sudo.group>; a member of a Group sudoer acts as its stand-in user, status.sudo.standIn),',
  '  the namespace from -n/--namespace or the current context. `kubectl sudo !!` repeats the last command.',
  '  Put --context, --kubeconfig and the like after `sudo`: kubectl accepts no flag before a plugin name.',
].join('\n');

/** Splits `--flag=value` and `-nvalue` forms; returns [flag, inline value or undefined]. */
function splitFlag(arg: string): [string, string | undefined] {
  if (arg.startsWith('--')) {
    const eq = arg.indexOf('=');
    return eq < 0 ? [arg, undefined] : [arg.slice(0, eq), arg.slice(eq + 1)];
  }
  if (/^-[ns]./.test(arg)) return [arg.slice(0, 2), arg.slice(2).replace(/^=/, '')];
  return [arg, undefined];
}

export function parseSudoArgs(argv: readonly string[]): SudoArgs {
  // `kubectl sudo !!`: the shell expands !! to the whole last command, kubectl included.
  const command = argv.length > 0 && /(^|\/)kubectl$/.test(argv[0]!) ? argv.slice(1) : [...argv];
  if (command.length === 0) throw new SudoUsageError(USAGE);
  if (command[0] === '-h' || command[0] === '--help') throw new SudoUsageError(USAGE, true);
  const connection: string[] = [];
  let namespace: string | undefined;
  for (let i = 0; i < command.length; i++) {
    const arg = command[i]!;
    if (arg === '--') break; // what follows belongs to the container (kubectl exec ... -- cmd -n x)
    const [flag, inline] = splitFlag(arg);
    if (IMPERSONATION_FLAGS.includes(flag)) throw new SudoUsageError(`kubectl sudo sets ${IMPERSONATION_FLAGS.join(', ')} itself; remove ${flag} from the command`);
    const takesValue = flag === '-n' || flag === '--namespace' || CONNECTION_FLAGS_WITH_VALUE.has(flag);
    if (!takesValue) {
      if (CONNECTION_FLAGS_BOOLEAN.has(flag)) connection.push(arg);
      continue;
    }
    let value = inline;
    if (value === undefined) {
      value = command[i + 1];
      if (value === undefined) throw new SudoUsageError(`flag ${flag} needs a value`);
      i += 1;
    }
    if (flag === '-n' || flag === '--namespace') namespace = value;
    else connection.push(`${flag}=${value}`);
  }
  return { command, connection, ...(namespace !== undefined ? { namespace } : {}) };
}

/** The kubectl arguments that run the command as `as` plus the sudoers group (impersonation flags first: kubectl takes global flags anywhere before `--`). */
export function sudoCommand(args: SudoArgs, as: string, group: string): string[] {
  return ['--as', as, '--as-group', group, ...args.command];
}

/** What to impersonate inside one LNamespace's namespace. */
export interface SudoTarget {
  group: string;
  standIn: string;
}

/** The `kubectl get` arguments that read the namespace's LNamespace. */
export const lnamespaceQuery = (namespace: string): string[] => ['get', 'lnamespaces.furnish.dev', namespace, '-o', 'json'];

/**
 * The sudoers group and stand-in from the answer to lnamespaceQuery: written to the LNamespace's
 * status by Furnish alone, never derived from the namespace's name. Else why not, as a message.
 */
export function sudoTarget(namespace: string, answer: { ok: boolean; out: string; err: string }): SudoTarget | string {
  if (!answer.ok) {
    if (/\(NotFound\)|not found/i.test(answer.err)) return `kubectl sudo: namespace "${namespace}" has no LNamespace: kubectl sudo elevates only inside an LNamespace's namespace (${answer.err.trim()})`;
    return `kubectl sudo: cannot read LNamespace "${namespace}" to find its sudoers group: ${answer.err.trim()}`;
  }
  let sudo: unknown;
  try {
    sudo = (JSON.parse(answer.out) as { status?: { sudo?: unknown } }).status?.sudo;
  } catch {
    return `kubectl sudo: kubectl get lnamespace ${namespace} did not answer JSON: ${answer.out.slice(0, 200)}`;
  }
  const { group, standIn } = (sudo ?? {}) as Record<string, unknown>;
  if (typeof group !== 'string' || group === '' || typeof standIn !== 'string' || standIn === '') {
    return `kubectl sudo: LNamespace "${namespace}" names no sudoers group yet (status.sudo): Furnish has not reconciled it since it was created or upgraded; try again shortly`;
  }
  return { group, standIn };
}

const SERVICE_ACCOUNT_USER = /^system:serviceaccount:([^:]+):([^:]+)$/;

/**
 * The `kubectl auth can-i` arguments asking whether `me` may impersonate themselves: a
 * ServiceAccount as `serviceaccounts/<name>` in its namespace, anyone else as `users/<name>`.
 */
export function selfImpersonationQuery(me: string): string[] {
  const sa = SERVICE_ACCOUNT_USER.exec(me);
  return sa ? ['auth', 'can-i', 'impersonate', `serviceaccounts/${sa[2]}`, '-n', sa[1]!] : ['auth', 'can-i', 'impersonate', `users/${me}`];
}

/**
 * Whom to act as: yourself when you may impersonate yourself (a User or ServiceAccount sudoer);
 * else the LNamespace's stand-in when you may impersonate it (a member of a Group sudoer); else
 * yourself, so that the API server's refusal names you.
 */
export function sudoIdentity(me: string, standIn: string, may: { self: boolean; standIn: boolean }): string {
  if (may.self) return me;
  return may.standIn ? standIn : me;
}

/** Explains a failed `kubectl auth whoami`; the fix when the API server does not serve SelfSubjectReview. */
export function whoamiFailure(stderr: string): string {
  if (/selfsubjectreviews|doesn't have a resource type|could not find the requested resource|the server could not find|not found|\b404\b/i.test(stderr)) {
    return [
      'kubectl sudo: cannot tell who you are: this API server does not serve SelfSubjectReview (`kubectl auth whoami`).',
      'Fix: serve it (Kubernetes 1.28+ does by default; 1.27: --runtime-config=authentication.k8s.io/v1beta1=true and',
      '--feature-gates=APISelfSubjectReview=true; 1.26: the same with v1alpha1), or name yourself: KUBECTL_SUDO_USER=<your user name> kubectl sudo ...',
      `(kubectl said: ${stderr.trim()})`,
    ].join('\n');
  }
  return `kubectl sudo: \`kubectl auth whoami\` failed: ${stderr.trim()}`;
}
