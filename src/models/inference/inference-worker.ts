/**
 * An inference worker thread (issue #20): its own tfjs backend (and native matmul path), one
 * {@link TransformerModel} built from the plain-data {@link InferenceSpec}, and the
 * {@link TransformerPolicy} that decodes with it — the same code as the in-thread sampler, so the
 * same requests give the same tokens and log-probs. Messages are handled strictly in order, so a
 * weight load sits between the batches before and after it.
 */
import { readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { InvalidArgumentError } from '../../core/errors.js';
import { Rng } from '../../core/rng.js';
import { describeBackend, selectBackend } from '../../backend/select.js';
import { readHfWeights } from '../hf/hf-weights.js';
import { TransformerModel } from '../transformer/model.js';
import { TransformerPolicy } from '../transformer-policy.js';
import type { FromWorker, InferenceSpec, ToWorker, WorkerCacheStats, WorkerError } from './protocol.js';
import { sharedViews } from './shared-weights.js';

const spec = workerData as InferenceSpec;
const port = parentPort;
if (port === null) throw new Error('inference-worker.ts runs as a worker thread (see inference-pool.ts)');

function errorData(error: unknown): WorkerError {
  if (error instanceof InvalidArgumentError) return { name: error.name, message: error.message, property: error.property, detail: error.detail };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}

function post(message: FromWorker): void {
  (port as NonNullable<typeof port>).postMessage(message);
}

/**
 * Lowers this thread's scheduling priority by `spec.nice` (Linux: a thread's nice value is its own,
 * set through its thread id). Why: Linux shares CPU between processes (autogroups), so this
 * thread competes with its own process's main thread; a higher nice lets the event loop run as
 * soon as it has work, and the model takes every cycle the loop leaves. No-op where unsupported.
 */
function yieldToMainThread(): void {
  if (!(spec.nice > 0)) return;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (Number.isInteger(tid) && tid > 0) setPriority(tid, Math.min(19, getPriority(tid) + spec.nice));
  } catch {
    // Not Linux, or /proc unavailable: keep the default priority.
  }
}

async function start(): Promise<{ model: TransformerModel; policy: TransformerPolicy }> {
  yieldToMainThread();
  const backend = await selectBackend(spec.backend, { matmul: spec.matmul });
  // Initial values are overwritten at once; the seed only fixes what they would have been.
  const model = spec.base === undefined ? new TransformerModel(spec.model, Rng.fromSeed(0)) : TransformerModel.fromNamedWeights(spec.model, await readHfWeights(spec.base.folder));
  if (spec.base !== undefined) model.attachLora(spec.base.lora, Rng.fromSeed(0));
  if (spec.outputs !== undefined) model.restrictOutputs(spec.outputs);
  model.loadNamedWeights(sharedViews(spec.weights));
  const policy = new TransformerPolicy(model, { ...spec.policy, version: spec.version });
  post({ kind: 'ready', backend: describeBackend(backend) });
  return { model, policy };
}

function cacheStats(policy: TransformerPolicy): WorkerCacheStats {
  const { hits, misses, evictions, released, episodes, bytes } = policy.cacheStats;
  return { hits, misses, evictions, released, episodes, bytes };
}

async function handle(served: { model: TransformerModel; policy: TransformerPolicy }, message: ToWorker): Promise<void> {
  const { model, policy } = served;
  if (message.kind === 'release') {
    policy.releaseEpisodes(message.episodeIds);
    return;
  }
  try {
    if (message.kind === 'weights') {
      model.loadNamedWeights(sharedViews(message.weights));
      policy.setVersion(message.version);
      post({ kind: 'loaded', id: message.id, cache: cacheStats(policy) });
      return;
    }
    // Every request carries its seed (the pool gives seedless ones one), so this stream is never drawn from.
    const unused = Rng.fromSeed(0);
    const results = message.greedy
      ? await policy.greedyActions(message.requests, message.options.maxNewTokens)
      : await policy.sampleActions(message.requests, message.options, unused);
    post({ kind: 'acted', id: message.id, results, cache: cacheStats(policy) });
  } catch (error) {
    post({ kind: 'failed', id: message.id, error: errorData(error) });
  }
}

const started = start();
let chain: Promise<void> = started.then(
  () => undefined,
  (error: unknown) => post({ kind: 'startFailed', error: errorData(error) }),
);
port.on('message', (message: ToWorker) => {
  chain = chain.then(async () => handle(await started, message)).catch(() => undefined);
});
