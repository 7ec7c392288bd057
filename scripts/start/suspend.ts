// Ctrl-Z on `npm start`. A stopped process's webhooks do not answer, and failing closed, they would
// refuse every namespace write on the cluster until it is resumed: the terminal's stop (SIGTSTP)
// removes the registrations first and only then stops the process (SIGSTOP); SIGCONT (`fg`, `bg`)
// writes them again. A plain SIGSTOP cannot be caught: docs/adr/0010.
import type { Logger } from '../../shared/log.ts';

interface Registrations {
  register(): Promise<void>;
  /** Whether every registration is gone. */
  unregister(): Promise<boolean>;
}

/** Installs the SIGTSTP and SIGCONT handlers; returns what removes them. */
export function unregisterWhileSuspended(registrations: Registrations, log: Logger): () => void {
  let suspended = false;
  // One after the other: a quick `fg` must not have its registrations deleted by the stop's removal.
  let chain = Promise.resolve();
  const stop = () => {
    if (suspended) return;
    suspended = true;
    chain = chain.then(async () => {
      const removed = await registrations.unregister().catch(() => false);
      if (removed) log.log('INFO', 'suspended (Ctrl-Z): webhook registrations removed until it resumes', {});
      else log.log('WARNING', 'suspended (Ctrl-Z), but not every webhook registration could be removed: namespace writes time out until it resumes (fg)', {});
      // Not when resumed meanwhile.
      if (suspended) process.kill(process.pid, 'SIGSTOP');
    });
  };
  const resume = () => {
    if (!suspended) return;
    suspended = false;
    chain = chain.then(async () => {
      await registrations.register();
      log.log('INFO', 'resumed: webhooks registered again', {});
    }).catch((e: unknown) => log.log('ERROR', 'resumed, but the webhooks could not be registered again: namespace writes are not guarded by this run (restart npm start)', { error: (e as Error).message }));
  };
  process.on('SIGTSTP', stop);
  process.on('SIGCONT', resume);
  return () => {
    process.off('SIGTSTP', stop);
    process.off('SIGCONT', resume);
  };
}
