/**
 * The `sampler` role of a worker: a sampler actor (dynamic batching, as in-process) that loads the
 * weights of each new KV `version` from the object store and then serves act requests for exactly
 * that version, in the `samplers` queue group, so any number of sampler workers share the load.
 */
import { createActor } from 'xstate';
import { withSamplerEffects } from '../../actors/sampler.js';
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import type { ResolvedConfig } from '../../core/config.js';
import { Rng } from '../../core/rng.js';
import type { NamedTensors } from '../../models/checkpoint.js';
import type { PolicyText } from '../../models/policy-text.js';
import { openSamplerModel } from '../pretrained-stack.js';
import { TransformerPolicy } from '../../models/transformer-policy.js';
import { transformerConfigOf } from '../policy-stack.js';
import type { Served } from '../wiring/ports.js';
import { serveSampler } from '../wiring/sampler.js';
import { limitInFlight } from '../../bus/in-flight-limit.js';
import type { NatsBus } from '../../bus/nats-bus.js';
import { outlastOutage } from './outage.js';
import { actRunId, getBlob, getState, type RunInfra, watchState, weightsName } from './run-infra.js';

export interface SamplerWorkerOptions {
  readonly bus: NatsBus;
  readonly infra: RunInfra;
  readonly config: ResolvedConfig;
  readonly text: PolicyText;
  /**
   * Act requests handled at once by this worker (default: twice the sampler's batch, so a batch
   * fills while the previous one runs); more wait in order, never dropped.
   */
  readonly maxInFlight?: number;
  readonly log: (line: string) => void;
  readonly clock?: Clock;
}

/** A running sampler role. */
export interface SamplerWorker {
  /** Version currently served (-1 before the first load). */
  readonly version: () => number;
  close(): Promise<void>;
}

/**
 * Starts the sampler role.
 * @example const sampler = await startSamplerWorker({ bus, infra, config, text, log: console.log });
 */
export async function startSamplerWorker(options: SamplerWorkerOptions): Promise<SamplerWorker> {
  const { bus, infra, config, text, log } = options;
  const clock = options.clock ?? systemClock;
  const model = await openSamplerModel(config, text.vocabSize, Rng.fromSeed(config.seed), (vocab) => transformerConfigOf(config, vocab));
  const policy = new TransformerPolicy(model, { endTokenId: text.endTokenId, stopTokenIds: text.stopTokenIds, version: 0, cacheMaxBytes: config.runtime.kvCacheMiB * 2 ** 20 });
  const samplerRng = Rng.fromSeed(config.seed).fork('sampler');
  const sampling = { temperature: config.sampling.temperature, topP: config.sampling.topP, maxNewTokens: config.sampling.maxActionTokens };
  const sampler = createActor(
    withSamplerEffects({
      generate: (requests) => policy.sampleActions(requests, sampling, samplerRng),
      loadWeights: async (version, weights) => {
        model.loadNamedWeights(weights as NamedTensors);
        policy.setVersion(version);
      },
      release: (episodeIds) => policy.releaseEpisodes(episodeIds),
    }),
    { input: { maxBatch: config.runtime.samplerMaxBatch, maxWaitMs: config.runtime.samplerMaxWaitMs, policyVersion: 0 }, clock },
  ).start();

  // One limit for the whole worker, shared by the act subjects of every served version.
  const limited = limitInFlight(bus, options.maxInFlight ?? 2 * config.runtime.samplerMaxBatch);
  let served: Served | null = null;
  let servedVersion = -1;
  let wanted = -1;
  let chain: Promise<void> = Promise.resolve();
  const load = async (version: number) => {
    if (version !== wanted || version === servedVersion) return; // a newer version arrived meanwhile
    // A server restart while the weights are read is waited out: a sampler left on an old version serves no episode.
    const weights = await outlastOutage(`loading weights v${version}`, () => getBlob(infra, weightsName(version)), { log: (line) => log(`sampler: ${line}`), clock });
    if (weights === null) {
      log(`sampler: weights v${version} are not in the object store (yet); waiting for the next version`);
      return;
    }
    const loaded = new Promise<void>((resolve, reject) => {
      const subs = [
        sampler.on('WEIGHTS_LOADED', (e) => {
          if (e.version !== version) return;
          for (const s of subs) s.unsubscribe();
          resolve();
        }),
        sampler.on('WEIGHTS_FAILED', (e) => {
          for (const s of subs) s.unsubscribe();
          reject(new Error(`loading weights v${version} failed: ${e.error}`));
        }),
      ];
    });
    sampler.send({ type: 'LOAD_WEIGHTS', version, weights });
    await loaded;
    // Serve the new version before dropping the old one: no gap for episodes of either.
    const previous = served;
    served = serveSampler(limited, actRunId(infra.runId, version), sampler);
    servedVersion = version;
    previous?.close();
    log(`sampler: serving policy v${version}`);
  };
  const onVersion = (value: unknown) => {
    if (!Number.isInteger(value)) {
      log(`sampler: ignored a non-integer version ${JSON.stringify(value)} in the run state`);
      return;
    }
    wanted = value as number;
    chain = chain.then(() => load(value as number)).catch((error: unknown) => log(`sampler: ${(error as Error).message}`));
  };
  const outage = { log: (line: string) => log(`sampler: ${line}`), clock };
  const stopWatch = await outlastOutage('watching the weights version', () => watchState(infra, 'version', onVersion), outage);
  // After a server restart, the version is read again: one published while the watch was
  // re-established must not leave this sampler serving the old one.
  let closed = false;
  void (async () => {
    for await (const status of bus.connection.status()) {
      if (closed) break;
      if (status.type !== 'reconnect') continue;
      const current = await outlastOutage('re-reading the weights version', () => getState(infra, 'version'), outage).catch(() => null);
      if (Number.isInteger(current) && (current as number) > wanted) onVersion(current);
    }
  })();
  return {
    version: () => servedVersion,
    async close() {
      closed = true;
      stopWatch();
      await chain;
      served?.close();
      sampler.stop();
      model.dispose();
    },
  };
}
