/**
 * Ctrl-C (SIGINT) and SIGTERM — what `timeout`, systemd, Kubernetes and CI send — stop a run the
 * same way: the current phase finishes, a checkpoint is written, the run is marked `interrupted`,
 * and the process exits 128 + the signal number (130, 143), as shells report a death by that
 * signal. The same signal again exits at once with that code.
 */

const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 } as const;
export type StopSignal = keyof typeof EXIT_CODES;

/** A stop request raised by a signal. */
export interface SignalStop {
  /** Aborted on the first SIGINT or SIGTERM. */
  readonly signal: AbortSignal;
  /** 130 or 143 once a signal arrived, else undefined. */
  exitCode(): number | undefined;
  /** Stops listening (the run ended). */
  dispose(): void;
}

/**
 * Listens for SIGINT and SIGTERM; `onStop` hears the first one (to say what happens next).
 * @example const stop = stopOnSignals((s) => log(`${s}: stopping after the current phase`)); await trainRun({ config, signal: stop.signal });
 */
export function stopOnSignals(onStop: (signal: StopSignal) => void): SignalStop {
  const controller = new AbortController();
  let received: StopSignal | null = null;
  const handlers = new Map<StopSignal, () => void>();
  for (const name of Object.keys(EXIT_CODES) as StopSignal[]) {
    const handler = () => {
      if (received !== null) process.exit(EXIT_CODES[name]);
      received = name;
      onStop(name);
      controller.abort();
    };
    handlers.set(name, handler);
    process.on(name, handler);
  }
  return {
    signal: controller.signal,
    exitCode: () => (received === null ? undefined : EXIT_CODES[received]),
    dispose: () => {
      for (const [name, handler] of handlers) process.off(name, handler);
    },
  };
}
