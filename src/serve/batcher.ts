/**
 * Dynamic batching for the server: HTTP requests that arrive while the model is busy (or in the
 * same event-loop turn) are generated together in one `Policy` call when their sampling settings
 * match. Calls run one at a time, so the model is never entered twice at once.
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
  readonly maxNewTokens: number;
}

interface Pending {
  readonly request: ActRequest;
  readonly settings: GenerationSettings;
  readonly key: string;
  readonly resolve: (result: ActResult) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * @example
 * const batcher = new GenerationBatcher(policy, rng, 32);
 * const result = await batcher.generate({ contextTokens, actionChoices: null, seed: 7 }, { temperature: 1, topP: 1, maxNewTokens: 24 });
 */
export class GenerationBatcher {
  private readonly queue: Pending[] = [];
  private running = false;
  /** Batches generated so far, with their sizes (for tests and logs). */
  readonly batchSizes: number[] = [];

  constructor(
    private readonly policy: Policy,
    /** Stream for requests that carry no seed. */
    private readonly rng: Rng,
    private readonly maxBatch: number,
  ) {}

  generate(request: ActRequest, settings: GenerationSettings): Promise<ActResult> {
    return new Promise<ActResult>((resolve, reject) => {
      const key = `${settings.temperature}|${settings.topP}|${settings.maxNewTokens}`;
      this.queue.push({ request, settings, key, resolve, reject });
      if (!this.running) {
        this.running = true;
        // Let requests of the same event-loop turn join the first batch.
        setImmediate(() => void this.drain());
      }
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const head = this.queue[0] as Pending;
      const batch: Pending[] = [];
      for (let i = 0; i < this.queue.length && batch.length < this.maxBatch; ) {
        if ((this.queue[i] as Pending).key === head.key) batch.push(...this.queue.splice(i, 1));
        else i++;
      }
      this.batchSizes.push(batch.length);
      const { temperature, topP, maxNewTokens } = head.settings;
      const requests = batch.map((p) => p.request);
      try {
        const results =
          temperature === 0
            ? await this.policy.greedyActions(requests, maxNewTokens)
            : await this.policy.sampleActions(requests, { temperature, topP, maxNewTokens }, this.rng);
        for (let i = 0; i < batch.length; i++) (batch[i] as Pending).resolve(results[i] as ActResult);
      } catch (error) {
        for (const p of batch) p.reject(error);
      }
    }
    this.running = false;
  }
}
