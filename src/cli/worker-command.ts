/**
 * `turnwise worker`: joins a training run on NATS with the given roles until the run ends or a
 * stop signal (exit 130/143 then). The connection flags are in `nats-flags.ts`.
 */
import { InvalidArgumentError as CommanderArgumentError } from 'commander';
import { redactCredentials } from '../core/redact.js';
import { runWorker, WORKER_ROLES, type WorkerRole } from '../runtime/nats/worker.js';
import { type NatsFlags, natsOptionsOf } from './nats-flags.js';
import { exitCodeForSignal } from './exit-codes.js';
import { nextStopSignal, type StopSignal } from './signals.js';

/** Parses `--role sampler,episodes`. */
export function parseRoles(value: string): WorkerRole[] {
  const roles = value.split(',').map((r) => r.trim());
  for (const role of roles) {
    if (!(WORKER_ROLES as readonly string[]).includes(role)) throw new CommanderArgumentError(`unknown role '${role}'; expected ${WORKER_ROLES.join(', ')} (comma-separated)`);
  }
  return roles as WorkerRole[];
}

/**
 * Runs a worker until its run ends or Ctrl-C.
 * @example await workerCommand({ nats: 'nats://127.0.0.1:4222', run: 'babyai-grpo', role: ['episodes'] });
 */
export async function workerCommand(opts: NatsFlags & { run: string; role: WorkerRole[]; pool?: number; remoteEnv?: boolean; envCapacity?: number; maxActInFlight?: number }): Promise<void> {
  const stop = new AbortController();
  let stoppedBy: StopSignal | null = null;
  void nextStopSignal().then((signal) => {
    stoppedBy = signal;
    stop.abort();
  });
  const log = (line: string) => console.error(`[worker ${process.pid}] ${redactCredentials(line)}`);
  const result = await runWorker({
    nats: natsOptionsOf(opts),
    runId: opts.run,
    roles: opts.role,
    log,
    signal: stop.signal,
    ...(opts.pool ? { poolSize: opts.pool } : {}),
    ...(opts.remoteEnv ? { remoteEnv: true } : {}),
    ...(opts.envCapacity ? { envCapacity: opts.envCapacity } : {}),
    ...(opts.maxActInFlight ? { maxActInFlight: opts.maxActInFlight } : {}),
  });
  console.log(`worker ${process.pid}: ${result.reason === 'signal' ? 'stopped' : `run ${result.runStatus}`}; published ${result.published} trajectories`);
  if (stoppedBy !== null) process.exitCode = exitCodeForSignal(stoppedBy);
}
