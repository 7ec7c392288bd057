// `npm run kube-sim -- [--user NAME[:GROUP,...]]... [--dir DIR] [--port N] [--no-metadata-name-label]
//   [--no-namespace-default-objects] [--no-resource-quota-controller] [--no-admission-policies]
//   [--admission-kubeconfig PATH] [--audit-log PATH]` (KUBE_SIM_ADMISSION_POLICIES=0 = --no-admission-policies)
// Runs kube-sim in the foreground, prints `kubeconfig: PATH` and `server: URL` (one line each),
// and stays up until interrupted.
import { startCluster, type StartOptions, type UserSpec } from './index.ts';

const USAGE = 'usage: npm run kube-sim -- [--user NAME[:GROUP,...]]... [--dir DIR] [--port N] [--no-metadata-name-label] [--no-namespace-default-objects] [--no-resource-quota-controller] [--no-admission-policies] [--admission-kubeconfig PATH] [--audit-log PATH]';

export function parseArgs(argv: string[]): StartOptions {
  const users: UserSpec[] = [];
  const options: StartOptions = {};
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    const value = (): string => {
      const next = argv[i + 1];
      if (next === undefined) throw new Error(`${arg} needs a value\n${USAGE}`);
      i += 1;
      return next;
    };
    switch (arg) {
      case '--user': {
        // Split at the first colon only: group names have colons of their own (system:masters).
        const spec = value();
        const colon = spec.indexOf(':');
        const [name, groups] = colon < 0 ? [spec, ''] : [spec.slice(0, colon), spec.slice(colon + 1)];
        users.push({ name, groups: groups.split(',').filter((g) => g !== '') });
        break;
      }
      case '--dir': options.dir = value(); break;
      case '--port': options.port = Number(value()); break;
      case '--no-metadata-name-label': options.metadataNameLabel = false; break;
      case '--no-namespace-default-objects': options.namespaceDefaultObjects = false; break;
      case '--no-resource-quota-controller': options.resourceQuotaController = false; break;
      case '--no-admission-policies': options.admissionPolicies = false; break;
      case '--admission-kubeconfig': options.admissionKubeconfig = value(); break;
      case '--audit-log': options.auditLog = value(); break;
      case '--help': case '-h': process.stdout.write(`${USAGE}\n`); process.exit(0); break;
      default: throw new Error(`unknown argument ${arg}\n${USAGE}`);
    }
  }
  if (users.length > 0) options.users = users;
  return options;
}

/**
 * Given by `npm start` and the benchmarks (scripts/start/kube-sim-process.ts), which keep this
 * process's stdin open: it closes when they end, however they end (`kill -9` included), and the
 * cluster they started ends with them. Not for a terminal, whose stdin may be /dev/null.
 */
const EXIT_WITH_STDIN = '--exit-with-stdin';

async function main(): Promise<void> {
  const started = performance.now();
  const argv = process.argv.slice(2);
  const cluster = await startCluster(parseArgs(argv.filter((a) => a !== EXIT_WITH_STDIN)));
  process.stdout.write(`kubeconfig: ${cluster.kubeconfigPath}\nserver: ${cluster.server}\n`);
  process.stdout.write(`users: ${Object.values(cluster.users).map((u) => `${u.name}${u.groups.length ? `:${u.groups.join(',')}` : ''}`).join(' ')}\n`);
  process.stdout.write(`ready in ${Math.round(performance.now() - started)} ms; Ctrl-C to stop\n`);
  // Once: a signal and the end of stdin may both ask, and the second must not exit before the first stop is done.
  let stopping: Promise<void> | undefined;
  const shutdown = (): void => {
    stopping ??= cluster.stop().then(() => process.exit(0));
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
  if (argv.includes(EXIT_WITH_STDIN)) process.stdin.on('end', shutdown).on('error', shutdown).resume();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((error: unknown) => {
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(1);
  });
}
