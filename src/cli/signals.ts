/**
 * Waiting for a stop signal (Ctrl-C or SIGTERM) in the commands that run until stopped (`serve`,
 * `ui`, `env serve`, `worker`), so each can shut down cleanly and exit with the signal's code.
 */

/** The signals that stop a long-running command. */
export type StopSignal = 'SIGINT' | 'SIGTERM';

/**
 * Resolves with the first SIGINT or SIGTERM (and stops listening for the other).
 * @example const signal = await nextStopSignal(); await server.close(); process.exitCode = exitCodeForSignal(signal);
 */
export function nextStopSignal(): Promise<StopSignal> {
  return new Promise((resolve) => {
    const onInt = () => done('SIGINT');
    const onTerm = () => done('SIGTERM');
    const done = (signal: StopSignal) => {
      process.off('SIGINT', onInt);
      process.off('SIGTERM', onTerm);
      resolve(signal);
    };
    process.once('SIGINT', onInt);
    process.once('SIGTERM', onTerm);
  });
}
