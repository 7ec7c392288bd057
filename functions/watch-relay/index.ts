// The watch relay process (in-cluster Deployment): config from the environment, credentials from
// the in-cluster service account, Pub/Sub, health and metrics on PORT, graceful shutdown on
// SIGTERM. The process itself is lib/relay-process.ts (`npm start` starts it too), what the relay
// is handed (billing, organizations, LNamespaces) lib/wiring.ts.
import { relayConfig } from './lib/config.ts';
import { startRelay } from './lib/relay-process.ts';

export { startRelay, type RunningRelay } from './lib/relay-process.ts';

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const running = await startRelay();
  const config = relayConfig(process.env);
  const shutdown = () => {
    const timer = setTimeout(() => process.exit(1), config.shutdownMs);
    timer.unref();
    void running.stop().then(() => process.exit(0));
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}
