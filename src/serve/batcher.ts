/**
 * Dynamic batching for the server: HTTP requests that arrive while the model is busy (or in the
 * same event-loop turn) are generated together in one `Policy` call when their temperature and
 * top-p match (each request carries its own token limit). Calls run one at a time, and other work
 * on the model (prompt scoring) queues in the same line, so the model is never entered twice at
 * once.
 *
 * A batch also holds at most `maxBatchTokens` tokens (each request's prompt plus its token limit;
 * the head of the queue always goes, alone if need be): the server's memory estimate counts one
 * full-context request's prefill and KV caches in flight (`./serve-memory.ts`), and 32 long prompts
 * in one call would prefill and cache up to 32 times that. Later requests wait for the next call,
 * in arrival order.
 *
 * Why not the sampler actor: it samples a whole batch with one fixed setting, and HTTP clients
 * choose temperature / top_p / max_tokens per request. With a per-request `seed` a request's
 * draws do not depend on its batch-mates (see `ActRequest.seed`).
 */
import type { Rng } from '../core/rng.js';
import type { ActRequest, ActResult, Policy } from '../core/policy.js';

/** Sampling of one request; `temperature: 0` means argmax decoding. */
export interface GenerationSettings {
  readonly temperature: number;
  readonly topP: number;
}

type Job =
  | { readonly kind: 'generate'; readonly request: ActRequest & { readonly maxNewTokens: number }; readonly key: string; readonly settings: GenerationSettings; readonly resolve: (r: ActResult) => void; readonly reject: (e: unknown) => void }
  | { readonly kind: 'exclusive'; readonly run: () => Promise<void> };

/**
 * @example
 * const batcher = new GenerationBatcher(policy, rng, 32, 4096);
 * const result = await batcher.generate({ contextTokens, actionChoices: null, seed: 7, maxNewTokens: 24 }, { temperature: 1, topP: 1 });
 */
export class GenerationBatcher {
  private readonly queue: Job[] = [];
  private running = false;
  /** Batches generated so far, with their sizes (for tests and logs). */
  readonly batchSizes: number[] = [];
  /** Prompt + new tokens of each batch (for tests and logs). */
  readonly batchTokens: number[] = [];

  constructor(
    private readonly policy: Policy,
    /** Stream for requests that carry no seed. */
    private readonly rng: Rng,
    private readonly maxBatch: number,
    /** Most prompt + new tokens one batch may hold (the served context: what the memory estimate counts in flight). */
    private readonly maxBatchTokens: number = Number.POSITIVE_INFINITY,
  ) {}

  /** Generates for one request (batched with others of the same settings). */
  generate(request: ActRequest & { readonly maxNewTokens: number }, settings: GenerationSettings): Promise<ActResult> {
    return new Promise<ActResult>((resolve, reject) => {
      this.push({ kind: 'generate', request, settings, key: `${settings.temperature}|${settings.topP}`, resolve, reject });
    });
  }

  /**
   * Runs `fn` alone on the model, in queue order (prompt scoring).
   * @example const scores = await batcher.exclusive(() => scorer.score(ids, 1));
   */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.push({ kind: 'exclusive', run: () => fn().then(resolve, reject) });
    });
  }

  /** Frees what the policy keeps for these generations (their KV caches). */
  release(episodeIds: readonly string[]): void {
    this.policy.releaseEpisodes?.(episodeIds);
  }

  private push(job: Job): void {
    this.queue.push(job);
    if (!this.running) {
      this.running = true;
      // Let requests of the same event-loop turn join the first batch.
      setImmediate(() => void this.drain());
    }
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const head = this.queue[0] as Job;
      if (head.kind === 'exclusive') {
        this.queue.shift();
        await head.run();
        continue;
      }
      const batch: Extract<Job, { kind: 'generate' }>[] = [];
      let tokens = 0;
      for (let i = 0; i < this.queue.length && batch.length < this.maxBatch; ) {
        const job = this.queue[i] as Job;
        if (job.kind !== 'generate' || job.key !== head.key) {
          i++;
          continue;
        }
        const cost = job.request.contextTokens.length + job.request.maxNewTokens;
        // Stop at the first request that does not fit, so requests of one setting keep their order.
        if (batch.length > 0 && tokens + cost > this.maxBatchTokens) break;
        tokens += cost;
        batch.push(...(this.queue.splice(i, 1) as Extract<Job, { kind: 'generate' }>[]));
      }
      this.batchSizes.push(batch.length);
      this.batchTokens.push(tokens);
      const { temperature, topP } = head.settings;
      const requests = batch.map((p) => p.request);
      const maxNewTokens = Math.max(...requests.map((r) => r.maxNewTokens));
      try {
        const results =
          temperature === 0
            ? await this.policy.greedyActions(requests, maxNewTokens)
            : await this.policy.sampleActions(requests, { temperature, topP, maxNewTokens }, this.rng);
        batch.forEach((p, i) => {
          p.resolve(results[i] as ActResult);
        });
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.running = false;
  }
}
