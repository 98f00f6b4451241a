/**
 * `turnwise worker` and the NATS connection flags shared with `turnwise train --nats`.
 * Secrets may come from the environment (`NATS_TOKEN`, `NATS_USER`, `NATS_PASSWORD`) so that they
 * stay out of `ps`.
 */
import { InvalidArgumentError as CommanderArgumentError } from 'commander';
import type { NatsConnectOptions } from '../runtime/nats/connect.js';
import { runWorker, WORKER_ROLES, type WorkerRole } from '../runtime/nats/worker.js';

/** The NATS flags as commander parses them. */
export interface NatsFlags {
  readonly nats: string;
  readonly natsToken?: string;
  readonly natsUser?: string;
  readonly natsPassword?: string;
  readonly natsNkey?: string;
  readonly natsCreds?: string;
  readonly natsCa?: string;
  readonly natsCert?: string;
  readonly natsKey?: string;
}

/** Help lines of the NATS flags, for commander's `.option`. */
export const NATS_FLAG_HELP: readonly (readonly [string, string])[] = [
  ['--nats-token <token>', 'NATS auth token (default: $NATS_TOKEN)'],
  ['--nats-user <user>', 'NATS user (default: $NATS_USER); password from --nats-password or $NATS_PASSWORD'],
  ['--nats-password <pass>', 'NATS password'],
  ['--nats-nkey <seedOrFile>', 'NKey seed, or a file holding it'],
  ['--nats-creds <file>', 'credentials file (user JWT + NKey seed)'],
  ['--nats-ca <file>', 'TLS: CA certificate to trust'],
  ['--nats-cert <file>', 'TLS: client certificate'],
  ['--nats-key <file>', 'TLS: client key'],
];

/**
 * Connection options from the flags and the environment.
 * @example natsOptionsOf({ nats: 'nats://127.0.0.1:4222', natsToken: 's3cret' })
 */
export function natsOptionsOf(flags: NatsFlags, env: NodeJS.ProcessEnv = process.env): NatsConnectOptions {
  const servers = flags.nats.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
  const token = flags.natsToken ?? env.NATS_TOKEN;
  const user = flags.natsUser ?? env.NATS_USER;
  const pass = flags.natsPassword ?? env.NATS_PASSWORD;
  const tls =
    flags.natsCa || flags.natsCert || flags.natsKey
      ? { ...(flags.natsCa ? { caFile: flags.natsCa } : {}), ...(flags.natsCert ? { certFile: flags.natsCert } : {}), ...(flags.natsKey ? { keyFile: flags.natsKey } : {}) }
      : undefined;
  return {
    servers,
    ...(token ? { token } : {}),
    ...(user ? { user } : {}),
    ...(user && pass ? { pass } : {}),
    ...(flags.natsNkey ? { nkeySeed: flags.natsNkey } : {}),
    ...(flags.natsCreds ? { credsFile: flags.natsCreds } : {}),
    ...(tls ? { tls } : {}),
  };
}

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
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  const log = (line: string) => console.error(`[worker ${process.pid}] ${line}`);
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
}
