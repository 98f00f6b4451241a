/**
 * A worker process joining a run on NATS (`turnwise worker --nats <url> --run <name> --role …`):
 * finds the run that holds the name (`./run-registry.ts`; waiting for one to start), reads its
 * manifest (config + tokenizer) from the object store, starts its roles, and stops when the run's
 * KV `status` says the run ended (or on `signal`).
 */
import { parseConfig, type ResolvedConfig, resolveConfig } from '../../core/config.js';
import { InvalidArgumentError, InvalidMessageError } from '../../core/errors.js';
import '../../envs/index.js';
import { selectBackend } from '../../backend/select.js';
import { type PolicyText, type PolicyTextManifest, policyTextFromManifest } from '../../models/policy-text.js';
import type { NatsConnectOptions } from '../../bus/nats-connect.js';
import { nuid } from '@nats-io/transport-node';
import { getEnvironmentSpec } from '../../envs/registry.js';
import { type EnvLeaseServer, startEnvLeaseServer } from './env-leases.js';
import { type EpisodesWorker, startEpisodesWorker } from './episodes-worker.js';
import { NatsBus } from '../../bus/nats-bus.js';
import { getBlob, openRunInfra, type RunInfra, watchState } from './run-infra.js';
import { resolveRunId } from './run-registry.js';
import { outlastOutage } from './outage.js';
import { remoteEnvSpec } from './remote-env.js';
import { type SamplerWorker, startSamplerWorker } from './sampler-worker.js';

/** What a worker does. */
export type WorkerRole = 'sampler' | 'episodes' | 'env';
export const WORKER_ROLES: readonly WorkerRole[] = ['sampler', 'episodes', 'env'];

export interface WorkerOptions {
  readonly nats: NatsConnectOptions;
  /** The run's name (`run.name`: the registry on the server says which run holds it) or its run id. */
  readonly runId: string;
  readonly roles: readonly WorkerRole[];
  /** Episodes in flight at most (episodes role). */
  readonly poolSize?: number;
  /**
   * Episodes role: run environments on `env` workers (leased sessions over NATS) instead of in
   * this process. Off by default: in-process env sessions need no env worker.
   */
  readonly remoteEnv?: boolean;
  /** Sampler role: act requests handled at once (default: twice the sampler's batch); more wait. */
  readonly maxActInFlight?: number;
  /** Env role: sessions served at once (default: the run's episodes per step). */
  readonly envCapacity?: number;
  /** Env role: a lease not renewed for this long is reclaimed (default 10 s). */
  readonly envLeaseMs?: number;
  readonly log?: (line: string) => void;
  readonly signal?: AbortSignal;
}

/** How the worker ended. */
export interface WorkerResult {
  readonly reason: 'run-ended' | 'signal';
  readonly runStatus: string | null;
  readonly published: number;
}

async function waitForManifest(infra: RunInfra, signal: AbortSignal | undefined): Promise<{ config: ResolvedConfig; text: PolicyText }> {
  for (let wait = 50; ; wait = Math.min(wait * 2, 1000)) {
    if (signal?.aborted) throw new Error('stopped before the run was published');
    const manifest = (await getBlob(infra, 'manifest')) as { config?: Record<string, unknown>; text?: PolicyTextManifest } | null;
    if (manifest !== null) {
      if (typeof manifest.config !== 'object' || manifest.config === null) throw new InvalidMessageError('object manifest', 'expected { config, text }');
      const { derived: _derived, ...raw } = manifest.config;
      return { config: resolveConfig(parseConfig(raw, `run manifest of ${infra.runId}`, { resolved: true })), text: policyTextFromManifest(manifest.text as PolicyTextManifest) };
    }
    // The learner publishes the manifest when it starts; a worker may start first.
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/**
 * Joins a run and works until it ends.
 * @example await runWorker({ nats: { servers: url }, runId: 'babyai-grpo', roles: ['sampler', 'episodes'] });
 */
export async function runWorker(options: WorkerOptions): Promise<WorkerResult> {
  if (options.roles.length === 0) throw InvalidArgumentError.format('role', `expected one or more of ${WORKER_ROLES.join(', ')}`);
  const log = options.log ?? ((line: string) => console.error(line));
  const bus = await NatsBus.connect({ name: `turnwise-worker-${options.roles.join('+')}`, ...options.nats });
  const started: (SamplerWorker | EpisodesWorker | EnvLeaseServer)[] = [];
  let episodes: EpisodesWorker | null = null;
  try {
    // `--run` is a run name (the registry says which run holds it) or a run id.
    // Joining is safe to repeat: a server restart meanwhile is waited out (./outage.ts).
    const retried = <T>(action: string, op: () => Promise<T>): Promise<T> => outlastOutage(action, op, { log: (line) => log(`worker: ${line}`) });
    const runId = await retried(`finding run '${options.runId}'`, () => resolveRunId(bus.connection, options.runId, { log, ...(options.signal ? { signal: options.signal } : {}) }));
    const infra = await retried('opening the run\'s streams', () => openRunInfra(bus.connection, runId));
    const { config, text } = await retried('reading the run manifest', () => waitForManifest(infra, options.signal));
    if (options.roles.includes('sampler')) await selectBackend(config.model.backend, { matmul: config.model.matmul });
    log(`worker: joined run '${options.runId}'${runId === options.runId ? '' : ` (id ${runId})`} as ${options.roles.join(' + ')}`);
    if (options.roles.includes('sampler')) started.push(await startSamplerWorker({ bus, infra, config, text, log, ...(options.maxActInFlight ? { maxInFlight: options.maxActInFlight } : {}) }));
    if (options.roles.includes('env')) {
      const capacity = options.envCapacity ?? config.derived.episodesPerStep;
      started.push(
        startEnvLeaseServer({
          bus,
          runId: infra.runId,
          spec: getEnvironmentSpec(config.env.name),
          envSettings: config.env.settings as Record<string, unknown>,
          capacity,
          leaseMs: options.envLeaseMs ?? 10_000,
          envTimeoutMs: config.runtime.envTimeoutMs,
          // Unique across machines (pids are not) and one subject token.
          workerId: `env${nuid.next()}`,
          log,
        }),
      );
      log(`worker: serving up to ${capacity} env sessions`);
    }
    if (options.roles.includes('episodes')) {
      const spec = options.remoteEnv
        ? remoteEnvSpec(getEnvironmentSpec(config.env.name), {
            bus,
            runId: infra.runId,
            holder: `episodes-${process.pid}`,
            envTimeoutMs: config.runtime.envTimeoutMs,
            leaseTimeoutMs: config.runtime.envTimeoutMs,
          })
        : undefined;
      if (spec) log('worker: episodes use env sessions leased from env workers');
      episodes = await startEpisodesWorker({ bus, infra, config, text, log, ...(options.poolSize ? { poolSize: options.poolSize } : {}), ...(spec ? { spec } : {}) });
      started.push(episodes);
    }
    let status: string | null = null;
    const reason = await new Promise<WorkerResult['reason']>((resolve) => {
      options.signal?.addEventListener('abort', () => resolve('signal'), { once: true });
      void retried('watching the run status', () =>
        watchState(infra, 'status', (value) => {
          status = String(value);
          if (status !== 'running') resolve('run-ended');
        }),
      ).catch((error: unknown) => {
        log(`worker: cannot watch the run status: ${(error as Error).message}`);
        resolve('run-ended');
      });
    });
    return { reason, runStatus: status, published: episodes?.published() ?? 0 };
  } finally {
    for (const role of started.reverse()) await role.close().catch(() => undefined);
    await bus.close();
  }
}
