/**
 * A model engine that records every call and answers as an engine whose current log-probs equal
 * the behaviour log-probs it is sent (ratio 1), so the per-token losses are exactly −w·A. Lets a
 * test read what turnwise sends and what objective each reduction rule makes of it.
 */
import type {
  AdamParams,
  EngineCapabilities,
  EngineDatum,
  EngineLossConfig,
  EngineLossName,
  EngineSampleRequest,
  EngineSampleResult,
  ForwardOutput,
  LossReduction,
  ModelEngine,
  OptimStepOutput,
  SamplerWeights,
} from '../../src/engines/engine.js';

/** One recorded forward-backward. */
export interface RecordedPass {
  readonly data: readonly EngineDatum[];
  readonly loss: EngineLossName;
  readonly config: EngineLossConfig | undefined;
}

export class RecordingEngine implements ModelEngine {
  readonly description = 'recording engine';
  readonly capabilities: EngineCapabilities;
  readonly passes: RecordedPass[] = [];
  readonly steps: AdamParams[] = [];
  readonly saved: string[] = [];
  readonly states: string[] = [];
  readonly sampleCalls: { weights: SamplerWeights | 'base'; requests: readonly EngineSampleRequest[] }[] = [];
  /** Log-prob the base gives every target (for KL tests). */
  baseLogprob = -1;
  closed = false;

  constructor(reduction: LossReduction) {
    this.capabilities = { losses: ['importance_sampling', 'ppo'], reduction };
  }

  private output(data: readonly EngineDatum[]): ForwardOutput {
    return {
      logprobs: data.map((d) => (d.samplingLogprobs ?? new Float32Array(d.inputTokens.length)).slice()),
      elementwiseLoss: data.map((d) => d.weights.map((w, t) => -w * (d.advantages?.[t] ?? 0))),
      metrics: {},
    };
  }

  async forward(data: readonly EngineDatum[]): Promise<ForwardOutput> {
    return this.output(data);
  }

  async forwardBackward(data: readonly EngineDatum[], loss: EngineLossName, config?: EngineLossConfig): Promise<ForwardOutput> {
    this.passes.push({ data, loss, config });
    return this.output(data);
  }

  async optimStep(adam: AdamParams): Promise<OptimStepOutput> {
    this.steps.push(adam);
    return { metrics: { 'skyrl.ai/grad_norm': 0.5 } };
  }

  async saveWeightsForSampler(name: string): Promise<SamplerWeights> {
    this.saved.push(name);
    return { path: `tinker://model/sampler_weights/${name}` };
  }

  async sample(weights: SamplerWeights | 'base', requests: readonly EngineSampleRequest[]): Promise<EngineSampleResult[]> {
    this.sampleCalls.push({ weights, requests });
    // Echoes the last prompt id, then stops on the first stop id.
    return requests.map((r) => ({
      sequences: [{ tokens: Int32Array.of(r.promptTokens[r.promptTokens.length - 1] ?? 0, r.stopTokenIds[0] ?? 0), logprobs: Float32Array.of(-0.5, -0.25), stopReason: 'stop' as const }],
      promptLogprobs: null,
    }));
  }

  async baseLogprobs(data: readonly EngineDatum[]): Promise<readonly Float32Array[]> {
    return data.map((d) => new Float32Array(d.inputTokens.length).fill(this.baseLogprob));
  }

  async saveState(name: string): Promise<string> {
    this.states.push(name);
    return `tinker://model/weights/${name}`;
  }

  async loadState(): Promise<void> {}

  async downloadAdapter(): Promise<void> {}

  async close(): Promise<void> {
    this.closed = true;
  }
}
