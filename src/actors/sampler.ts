/**
 * The sampler actor: dynamic batching of act requests from every live episode into one
 * `generate` call, and hot weight swaps between batches.
 *
 * States: `idle → collecting → generating → idle`; `generating` has sub-states `running` and
 * `draining` (a weight load is waiting for this batch to finish); `loadingWeights`; `resuming`
 * (after a load, requests queued meanwhile are flushed at once, without the max-wait).
 * The weight-update path is therefore `draining → loadingWeights → resuming`. With
 * `generateTimeoutMs` / `loadTimeoutMs` set, a generation or load that does not settle in time
 * fails (ACT_FAILED for its requests / WEIGHTS_FAILED, old weights kept) and the sampler serves on,
 * so a lost reply cannot hang the run.
 * A batch is flushed when `maxBatch` requests are pending or `maxWaitMs` after the first one
 * arrived (an xstate delay, so the clock drives it). Requests that arrive while generating,
 * draining or loading are queued, never dropped.
 *
 * Routing: each `ACT` carries a `requestId` (an `ACT_BATCH` several); the sampler answers each
 * with exactly one emitted `ACT_DONE {requestId, result}` or `ACT_FAILED {requestId, error}`. Events rather than callbacks
 * keep the messages plain data, so the same contract holds across a bus (see `serveSampler` in
 * `src/runtime/wiring/message-flow.ts`).
 *
 * Backpressure is not the sampler's: it serves whatever admitted episodes ask. The asynchronous
 * loop holds episodes back at admission (`src/runtime/async/async-loop-machine.ts`), which is where
 * the staleness bound and the room for episodes are known; pausing a sampler instead would stall
 * episodes already running (holding their environments, and making their tokens staler).
 *
 * Per-episode caches: the policy may keep an episode's KV cache between turns (requests carry
 * `episodeId`); `RELEASE` (sent when episodes end) frees them at once, in any state, through the
 * `release` effect. Without it the policy's LRU bound still caps their memory.
 */
import { assign, emit, enqueueActions, fromPromise, setup } from 'xstate';
import { TurnwiseError } from '../core/errors.js';
import type { ActRequest, ActResult } from '../core/policy.js';

/** Events the sampler accepts. */
export type SamplerAccepts =
  | { readonly type: 'ACT'; readonly requestId: string; readonly request: ActRequest }
  /** Several ACTs at once (one queue copy instead of one per request: thousands of episodes wait at a time). */
  | { readonly type: 'ACT_BATCH'; readonly acts: readonly { readonly requestId: string; readonly request: ActRequest }[] }
  /** New weights (opaque to the sampler; the `loadWeights` effect knows the format). */
  | { readonly type: 'LOAD_WEIGHTS'; readonly version: number; readonly weights: unknown }
  /** These episodes ended: free what the policy keeps for them (KV caches). */
  | { readonly type: 'RELEASE'; readonly episodeIds: readonly string[] };

/** Events the sampler emits. */
export type SamplerEmits =
  | { readonly type: 'ACT_DONE'; readonly requestId: string; readonly result: ActResult }
  | { readonly type: 'ACT_FAILED'; readonly requestId: string; readonly error: string }
  | { readonly type: 'BATCH_GENERATED'; readonly size: number; readonly policyVersion: number }
  | { readonly type: 'WEIGHTS_LOADED'; readonly version: number }
  | { readonly type: 'WEIGHTS_FAILED'; readonly version: number; readonly error: string };

/** The I/O a sampler performs, injected. */
export interface SamplerEffects {
  /** One batched generation; results in request order. */
  generate(requests: readonly ActRequest[], signal: AbortSignal): Promise<ActResult[]>;
  /** Installs new weights in the policy. */
  loadWeights(version: number, weights: unknown, signal: AbortSignal): Promise<void>;
  /** Frees what the policy keeps for ended episodes (e.g. `policy.releaseEpisodes`); optional. */
  release?(episodeIds: readonly string[]): void;
}

export interface SamplerInput {
  /** Flush as soon as this many requests are pending. */
  readonly maxBatch: number;
  /** Flush this many ms after the first pending request arrived. */
  readonly maxWaitMs: number;
  /** Version of the weights loaded at start (default 0). */
  readonly policyVersion?: number;
  /** Fail a batch whose generation has not settled after this many ms (default: no limit). */
  readonly generateTimeoutMs?: number;
  /** Give up a weight load that has not settled after this many ms, keeping the old weights (default: no limit). */
  readonly loadTimeoutMs?: number;
}

/** Longest delay a timer can take (setTimeout's 32-bit limit); used when a timeout is off, behind a guard. */
const NO_TIMEOUT_MS = 2_147_483_647;

interface PendingAct {
  readonly requestId: string;
  readonly request: ActRequest;
}

interface WeightsUpdate {
  readonly version: number;
  readonly weights: unknown;
}

export interface SamplerContext {
  readonly maxBatch: number;
  readonly maxWaitMs: number;
  /** Queued requests, oldest first. */
  readonly pending: readonly PendingAct[];
  /** The batch being generated. */
  readonly inFlight: readonly PendingAct[];
  /** Latest weights waiting to be loaded (newer ones replace older ones). */
  readonly nextWeights: WeightsUpdate | null;
  /** Weights being loaded. */
  readonly loading: WeightsUpdate | null;
  /** Version of the weights currently loaded. */
  readonly policyVersion: number;
  readonly generateTimeoutMs: number | null;
  readonly loadTimeoutMs: number | null;
}

function notProvided(name: string): never {
  throw new TurnwiseError(`sampler effect '${name}' was not provided (use withSamplerEffects)`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The sampler machine with placeholder effects; see {@link withSamplerEffects}.
 * @example
 * const sampler = createActor(withSamplerEffects({ generate, loadWeights }), { input: { maxBatch: 8, maxWaitMs: 5 }, clock }).start();
 * sampler.on('ACT_DONE', (e) => resolve(e.requestId, e.result));
 * sampler.send({ type: 'ACT', requestId: 'r1', request });
 */
export const samplerMachine = setup({
  types: {
    context: {} as SamplerContext,
    events: {} as SamplerAccepts,
    emitted: {} as SamplerEmits,
    input: {} as SamplerInput,
  },
  actors: {
    generate: fromPromise<ActResult[], { requests: readonly ActRequest[] }>(async () => notProvided('generate')),
    loadWeights: fromPromise<void, WeightsUpdate>(async () => notProvided('loadWeights')),
  },
  delays: {
    maxWait: ({ context }) => context.maxWaitMs,
    generateTimeout: ({ context }) => context.generateTimeoutMs ?? NO_TIMEOUT_MS,
    loadTimeout: ({ context }) => context.loadTimeoutMs ?? NO_TIMEOUT_MS,
  },
  guards: {
    batchFull: ({ context }) => context.pending.length >= context.maxBatch,
    hasPending: ({ context }) => context.pending.length > 0,
    hasWeights: ({ context }) => context.nextWeights !== null,
    hasGenerateTimeout: ({ context }) => context.generateTimeoutMs !== null,
    hasLoadTimeout: ({ context }) => context.loadTimeoutMs !== null,
  },
  actions: {
    enqueue: assign({
      pending: ({ context, event }) => {
        if (event.type === 'ACT') return [...context.pending, { requestId: event.requestId, request: event.request }];
        return event.type === 'ACT_BATCH' ? [...context.pending, ...event.acts] : context.pending;
      },
    }),
    storeWeights: assign({
      nextWeights: ({ context, event }) => (event.type === 'LOAD_WEIGHTS' ? { version: event.version, weights: event.weights } : context.nextWeights),
    }),
    takeBatch: assign(({ context }) => ({
      inFlight: context.pending.slice(0, context.maxBatch),
      pending: context.pending.slice(context.maxBatch),
    })),
    takeWeights: assign(({ context }) => ({ loading: context.nextWeights, nextWeights: null })),
    // Placeholder: withSamplerEffects binds it to `effects.release`.
    release: () => {},
  },
}).createMachine({
  id: 'sampler',
  context: ({ input }) => ({
    maxBatch: Math.max(1, Math.floor(input.maxBatch)),
    maxWaitMs: Math.max(0, input.maxWaitMs),
    pending: [],
    inFlight: [],
    nextWeights: null,
    loading: null,
    policyVersion: input.policyVersion ?? 0,
    generateTimeoutMs: input.generateTimeoutMs ?? null,
    loadTimeoutMs: input.loadTimeoutMs ?? null,
  }),
  initial: 'idle',
  on: {
    // Defaults for every state; states that must act differently override them.
    ACT: { actions: 'enqueue' },
    ACT_BATCH: { actions: 'enqueue' },
    LOAD_WEIGHTS: { actions: 'storeWeights' },
    // Any state: freeing caches never waits for a batch (the ended episodes have nothing in flight).
    RELEASE: { actions: 'release' },
  },
  states: {
    idle: {
      on: {
        ACT: { target: 'collecting', actions: 'enqueue' },
        ACT_BATCH: { guard: ({ event }) => event.acts.length > 0, target: 'collecting', actions: 'enqueue' },
        LOAD_WEIGHTS: { target: 'loadingWeights', actions: 'storeWeights' },
      },
    },
    collecting: {
      always: { guard: 'batchFull', target: 'generating' },
      after: { maxWait: 'generating' },
      on: {
        // No generation in flight, so nothing to drain: load now; the queue is served afterwards.
        LOAD_WEIGHTS: { target: 'loadingWeights', actions: 'storeWeights' },
      },
    },
    generating: {
      entry: 'takeBatch',
      invoke: {
        id: 'generate',
        src: 'generate',
        input: ({ context }) => ({ requests: context.inFlight.map((p) => p.request) }),
        onDone: {
          target: 'routing',
          actions: enqueueActions(({ context, event, enqueue }) => {
            const results = event.output;
            if (results.length !== context.inFlight.length) {
              const error = `generate returned ${results.length} results for ${context.inFlight.length} requests`;
              for (const p of context.inFlight) enqueue.emit({ type: 'ACT_FAILED', requestId: p.requestId, error });
            } else {
              context.inFlight.forEach((p, i) => {
                enqueue.emit({ type: 'ACT_DONE', requestId: p.requestId, result: results[i] as ActResult });
              });
              enqueue.emit({ type: 'BATCH_GENERATED', size: results.length, policyVersion: results[0]?.policyVersion ?? context.policyVersion });
            }
            enqueue.assign({ inFlight: [] });
          }),
        },
        onError: {
          target: 'routing',
          actions: enqueueActions(({ context, event, enqueue }) => {
            const error = `generate failed: ${messageOf(event.error)}`;
            for (const p of context.inFlight) enqueue.emit({ type: 'ACT_FAILED', requestId: p.requestId, error });
            enqueue.assign({ inFlight: [] });
          }),
        },
      },
      after: {
        generateTimeout: {
          guard: 'hasGenerateTimeout',
          target: 'routing',
          actions: enqueueActions(({ context, enqueue }) => {
            const error = `generate timed out after ${context.generateTimeoutMs} ms`;
            for (const p of context.inFlight) enqueue.emit({ type: 'ACT_FAILED', requestId: p.requestId, error });
            enqueue.assign({ inFlight: [] });
          }),
        },
      },
      initial: 'running',
      states: {
        running: { on: { LOAD_WEIGHTS: { target: 'draining', actions: 'storeWeights' } } },
        // Weights wait for the batch in flight: its tokens must all come from one version.
        draining: {},
      },
    },
    loadingWeights: {
      entry: 'takeWeights',
      after: {
        loadTimeout: {
          guard: 'hasLoadTimeout',
          target: 'resuming',
          actions: [
            emit(({ context }) => ({
              type: 'WEIGHTS_FAILED' as const,
              version: (context.loading as WeightsUpdate).version,
              error: `loadWeights timed out after ${context.loadTimeoutMs} ms`,
            })),
            assign({ loading: null }),
          ],
        },
      },
      invoke: {
        id: 'loadWeights',
        src: 'loadWeights',
        input: ({ context }) => context.loading as WeightsUpdate,
        onDone: {
          target: 'resuming',
          actions: [
            emit(({ context }) => ({ type: 'WEIGHTS_LOADED' as const, version: (context.loading as WeightsUpdate).version })),
            assign(({ context }) => ({ policyVersion: (context.loading as WeightsUpdate).version, loading: null })),
          ],
        },
        onError: {
          // Keep serving the old weights; the learner/coordinator decides what to do.
          target: 'resuming',
          actions: [
            emit(({ context, event }) => ({
              type: 'WEIGHTS_FAILED' as const,
              version: (context.loading as WeightsUpdate).version,
              error: `loadWeights failed: ${messageOf(event.error)}`,
            })),
            assign({ loading: null }),
          ],
        },
      },
    },
    // After a load (or a failed one): requests that waited through the update go out at once.
    resuming: {
      always: [
        { guard: 'hasWeights', target: 'loadingWeights' },
        { guard: 'hasPending', target: 'generating' },
        { target: 'idle' },
      ],
    },
    // Transient: after a batch or a load, decide what comes next.
    routing: {
      always: [
        { guard: 'hasWeights', target: 'loadingWeights' },
        { guard: 'hasPending', target: 'collecting' },
        { target: 'idle' },
      ],
    },
  },
});

/**
 * The sampler machine with its I/O bound to `effects`.
 * @example const logic = withSamplerEffects({ generate: (reqs) => policy.sampleActions(reqs, opts, rng), loadWeights });
 */
export function withSamplerEffects(effects: SamplerEffects) {
  return samplerMachine.provide({
    actors: {
      generate: fromPromise<ActResult[], { requests: readonly ActRequest[] }>(({ input, signal }) => effects.generate(input.requests, signal)),
      loadWeights: fromPromise<void, WeightsUpdate>(({ input, signal }) => effects.loadWeights(input.version, input.weights, signal)),
    },
    actions: {
      release: ({ event }) => {
        if (event.type === 'RELEASE') effects.release?.(event.episodeIds);
      },
    },
  });
}
