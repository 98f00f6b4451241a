/**
 * `npm run bench -- llm [--quick] [--rounds N]`: a SmolLM2-135M-shaped model (random weights) in
 * turnwise and in PyTorch (bench/llm_torch.py, same shapes and work, 1 thread each; the interpreter
 * from `TORCH_PYTHON`, else Debian's: bench/torch-python.ts), interleaved: each round measures every
 * turnwise figure, then runs the PyTorch child once; each figure is printed as its best with the
 * spread over rounds, per wall-second and per CPU-second, with the ratio and the share of the core's
 * FMA peak it reaches (bench/flops.ts). Figures:
 * - training: one [2, 128] PPO-clip step (forward, backward, global-norm clip, Adam), full
 *   fine-tuning and LoRA (rank 16 on all seven projections);
 * - prefill: one 256-token prompt through the packed forward (next-token logits of the last token);
 * - decode with the KV cache, batched B = 1, 16, 64: 64-token contexts, then greedy steps through
 *   `TransformerPolicy` (the sampler's own path), the decode steps alone;
 * - training with LoRA on a Qwen2.5-0.5B-shaped model (151,936-id vocabulary: the loss head runs in
 *   chunks of rows; decoder layers checkpointed, as a pretrained run trains them; refused with the
 *   estimate's parts when it does not fit the wasm heap; its live tensor peak and heap printed next
 *   to the estimate; `--no-qwen` skips it, `--qwen-only` runs it alone, followed by one sampling
 *   call of 16 episodes of 647-token prompts and 64 new tokens, an inference worker's load
 *   (bench/llm-qwen-sampler.ts); `--no-qwen-train` leaves the training out);
 * - `--prefill-only`: the prefill figure alone, both sides (no training, decode or Qwen part);
 * - resident memory (RSS).
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Rng } from '../src/core/rng.js';
import { nativeAdamAvailable } from '../src/backend/native-adam.js';
import { nativeBlas } from '../src/backend/native-blas.js';
import { tensorHeapBytes } from '../src/backend/heap.js';
import { describeBackend, selectBackend } from '../src/backend/select.js';
import { tf } from '../src/backend/tf.js';
import { ALLOCATOR_SLACK, describeEstimate, estimateMemory, formatBytes, WASM_HEAP_BYTES } from '../src/models/memory-estimate.js';
import { AdamW } from '../src/learner/optimizer.js';
import { headChunkRows } from '../src/models/transformer/chunked-head.js';
import { TransformerModel } from '../src/models/transformer/model.js';
import { corePeak, decodeStepFlops, describePeak, peakShare, prefillFlops, trainStepFlops } from './flops.js';
import { decodeTiming, type Plan, prefillTiming, QWEN25_05B, SMOLLM2_135M, type TorchFigures, torchRound, trainTiming } from './llm-work.js';
import { trackLiveTensorBytes } from '../test/helpers/live-tensor-bytes.js';
import { qwenSampler, type SamplerCase } from './llm-qwen-sampler.js';
import { fmt, Rates, ratio, type Timing } from './samples.js';
import { describeTorch, torchPython } from './torch-python.js';

export { SMOLLM2_135M } from './llm-work.js';

const LORA = { rank: 16, alpha: 32, dropout: 0, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] } as const;

/** One figure: its two sides' rates and the FLOPs of one unit (token) of its work. */
interface Figure {
  readonly label: string;
  readonly flopsPerToken: number;
  readonly ours: Rates;
  readonly theirs: Rates;
  /** Why turnwise has no figure (e.g. does not fit), or ''. */
  note: string;
}

function parseArgs(args: string[]): { quick: boolean; rounds: number } {
  const quick = args.includes('--quick');
  const at = args.indexOf('--rounds');
  const rounds = at >= 0 ? Number(args[at + 1]) : quick ? 1 : 3;
  if (!(Number.isInteger(rounds) && rounds >= 1)) throw new Error(`--rounds: expected a positive integer, got "${args[at + 1]}"`);
  return { quick, rounds };
}

export async function main(args: string[]): Promise<void> {
  const { quick, rounds } = parseArgs(args);
  const prefillOnly = args.includes('--prefill-only');
  const decodeRows = prefillOnly ? [] : [1, 16, 64];
  const plan: Plan = quick
    ? { prefillTokens: 128, decodeRows, decodeContext: 32, decodeSteps: 4, trainBatch: [1, 64], loraRank: 16, repeat: 1, trainRepeat: 1 }
    : { prefillTokens: 256, decodeRows, decodeContext: 64, decodeSteps: 16, trainBatch: [2, 128], loraRank: 16, repeat: 2, trainRepeat: 2 };
  const info = await selectBackend('auto');
  nativeBlas().blas?.setThreads(1);
  const torch = torchPython();
  console.log(`backend: ${describeBackend(info)} | ${describeTorch(torch)} | ${describePeak()}`);
  console.log(`load average at the start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (args.includes('--qwen-only')) {
    const started = performance.now();
    const qwenRounds = args.includes('--no-qwen-train') ? 0 : args.includes('--rounds') ? rounds : quick ? 1 : 2;
    const sampler = { rows: 16, promptTokens: 647, newTokens: quick ? 8 : 64 };
    printTable([await qwenLora(plan, qwenRounds, Rng.fromSeed(11), info.name === 'wasm', sampler)], torch.version ?? 'n/a');
    console.log(`all done in ${((performance.now() - started) / 1000).toFixed(0)} s; load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    return;
  }
  console.log('model: SmolLM2-135M shape (30 layers, d 576, 9/3 heads x 64, ffn 1536, vocab 49152, tied), random weights; 1 thread each side');
  const shape = SMOLLM2_135M;
  const [rows, seq] = plan.trainBatch;
  const tokens = rows * seq;
  const figure = (label: string, flopsPerToken: number): Figure => ({ label, flopsPerToken, ours: new Rates(), theirs: new Rates(), note: '' });
  const full = figure(`training, full fine-tuning [${rows}, ${seq}]`, trainStepFlops(shape, rows, seq, null) / tokens);
  const lora = figure(`training, LoRA r=${plan.loraRank} on all projections`, trainStepFlops(shape, rows, seq, { ...LORA, targets: [...LORA.targets] }) / tokens);
  const prefill = figure(`prefill (${plan.prefillTokens} tokens, packed)`, prefillFlops(shape, plan.prefillTokens) / plan.prefillTokens);
  const decode = plan.decodeRows.map((b) => figure(`decode B=${b} (${plan.decodeContext}-token contexts, ${plan.decodeSteps} steps, KV cache)`, decodeStepFlops(shape, b, plan.decodeContext + plan.decodeSteps / 2) / b));
  const figures = prefillOnly ? [prefill] : [full, lora, prefill, ...decode];

  const rng = Rng.fromSeed(11);
  const started = performance.now();
  const model = new TransformerModel(shape, Rng.fromSeed(0));
  console.log(`built ${(model.parameterCount / 1e6).toFixed(1)}M parameters in ${((performance.now() - started) / 1000).toFixed(1)} s; tensor memory ${(tf.memory().numBytes / 2 ** 20).toFixed(0)} MiB`);
  const fullOptimizer = new AdamW({ lr: 1e-5, beta1: 0.9, beta2: 0.99 });
  // A wasm heap that overflows cannot be caught (the module aborts), so the estimate decides first.
  // On the native path Adam's moments live outside the heap (AdamW, src/learner/host-adam.ts).
  const fullNeeds = estimateMemory(shape, { lora: null, reference: false, microBatchTokens: tokens, sequenceLength: seq, kvCacheBytes: 0, optimizerOnHost: nativeAdamAvailable(), accumulates: false });
  const fullFits = info.name !== 'wasm' || fullNeeds.total <= WASM_HEAP_BYTES;
  if (!fullFits) full.note = `does not fit the wasm heap (needs about ${formatBytes(fullNeeds.total)}: ${describeEstimate(fullNeeds)})`;
  let lastTorch: TorchFigures | null = null;
  try {
    for (let round = 0; round < rounds; round++) {
      // Training first: its activations are the largest allocations, before the decode caches fragment the heap.
      if (fullFits && !prefillOnly) full.ours.add(tokens, await trainTiming(model, fullOptimizer, plan, rng));
      if (!prefillOnly) lora.ours.add(tokens, await loraTiming(model, plan, rng));
      prefill.ours.add(plan.prefillTokens, await prefillTiming(model, plan.prefillTokens, plan.repeat, rng));
      for (const [i, b] of plan.decodeRows.entries()) decode[i]?.ours.add(b * plan.decodeSteps, await decodeTiming(model, b, plan, rng));
      const t = torchRound({ ...plan, skipTraining: prefillOnly }, shape);
      if (typeof t === 'string') console.log(`round ${round + 1}: ${t}`);
      else {
        lastTorch = t;
        full.theirs.addRates(t.train_full_TokPerSec, t.train_full_TokPerCpuSec);
        lora.theirs.addRates(t.train_lora_TokPerSec, t.train_lora_TokPerCpuSec);
        prefill.theirs.addRates(t.prefillTokPerSec, t.prefillTokPerCpuSec);
        for (const [i, b] of plan.decodeRows.entries()) decode[i]?.theirs.addRates(t.decode?.[String(b)], t.decodeCpu?.[String(b)]);
      }
      console.log(`round ${round + 1}/${rounds} done at ${((performance.now() - started) / 1000).toFixed(0)} s, load ${loadavg()[0].toFixed(2)}`);
    }
  } finally {
    fullOptimizer.dispose();
    model.dispose();
  }
  // The SmolLM2 figures are printed before the Qwen part: a wasm heap abort there cannot be caught
  // and must not take them with it.
  const torchVersion = lastTorch?.torch ?? torch.version ?? 'n/a';
  printTable(figures, torchVersion);
  const top = plan.decodeRows[plan.decodeRows.length - 1];
  const d1 = decode[0];
  const dTop = decode[decode.length - 1];
  if (top !== undefined && d1 !== undefined && dTop !== undefined) {
    console.log(`\ndecode B=${top} / B=1: turnwise ${ratio(dTop.ours.best, d1.ours.best)}, PyTorch ${ratio(dTop.theirs.best, d1.theirs.best)}`);
  }
  console.log(`resident memory: max RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB (PyTorch ${lastTorch ? lastTorch.maxRssMiB.toFixed(0) : 'n/a'} MiB)`);
  console.log(`${rounds} round(s) in ${((performance.now() - started) / 1000).toFixed(0)} s; load average: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  if (!args.includes('--no-qwen') && !prefillOnly) {
    printTable([await qwenLora(plan, quick ? 1 : 2, rng, info.name === 'wasm')], torchVersion);
    console.log(`all done in ${((performance.now() - started) / 1000).toFixed(0)} s; load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  }
}

/** A LoRA step on `model`'s base (shared, no copy) with adapters of its own, its layers checkpointed if asked; the base trains again afterwards. */
async function loraTiming(model: TransformerModel, plan: Plan, rng: Rng, checkpointing = false): Promise<Timing> {
  const adapted = model.withOwnAdapters({ ...LORA, targets: [...LORA.targets], rank: plan.loraRank }, Rng.fromSeed(2));
  adapted.checkpointActivations(checkpointing);
  const optimizer = new AdamW({ lr: 1e-5, beta1: 0.9, beta2: 0.99 });
  try {
    return await trainTiming(adapted, optimizer, plan, rng);
  } finally {
    optimizer.dispose();
    adapted.dispose();
    // Adapters freeze the base they sit on; the next round's full fine-tuning trains it again.
    for (const v of model.trainableVariables()) v.trainable = true;
  }
}

/**
 * LoRA r=16 on a Qwen2.5-0.5B-shaped model (494M parameters, a 151,936-id vocabulary, tied, q/k/v
 * biases), interleaved with the same in PyTorch: that it fits the wasm heap and how fast it runs.
 * Its decoder layers are checkpointed, as a pretrained run trains them (runtime/pretrained-stack.ts):
 * without, tfjs keeps every layer's tape until the backward ends (3.73 GiB of activations at
 * [2, 128], past the heap with the 1.84 GiB of weights). The estimate decides first, since a wasm
 * heap that overflows aborts the process; the live tensor peak of the first step is printed next to it.
 */
async function qwenLora(plan: Plan, rounds: number, rng: Rng, wasm: boolean, sampler: SamplerCase | null = null): Promise<Figure> {
  const [rows, seq] = plan.trainBatch;
  const tokens = rows * seq;
  const spec = { ...LORA, targets: [...LORA.targets], rank: plan.loraRank };
  const fig: Figure = { label: `training, LoRA r=${plan.loraRank}, Qwen2.5-0.5B shape [${rows}, ${seq}], checkpointed layers`, flopsPerToken: trainStepFlops(QWEN25_05B, rows, seq, spec) / tokens, ours: new Rates(), theirs: new Rates(), note: '' };
  const needs = estimateMemory(QWEN25_05B, { lora: spec, reference: false, microBatchTokens: tokens, sequenceLength: seq, kvCacheBytes: 0, checkpointing: true, optimizerOnHost: nativeAdamAvailable(), accumulates: false });
  console.log(`Qwen2.5-0.5B shape: LoRA estimate ${describeEstimate(needs)} (loss head in chunks of ${headChunkRows(QWEN25_05B.vocabSize)} rows)`);
  if (wasm && needs.total > WASM_HEAP_BYTES) {
    fig.note = `does not fit the wasm heap (needs about ${formatBytes(needs.total)})`;
    return fig;
  }
  const live = wasm ? trackLiveTensorBytes() : null;
  const atStart = live?.read().live ?? 0;
  const started = performance.now();
  const model = new TransformerModel(QWEN25_05B, Rng.fromSeed(0));
  const weights = (live?.read().live ?? 0) - atStart;
  console.log(`Qwen2.5-0.5B shape: ${(model.parameterCount / 1e6).toFixed(0)}M parameters built in ${((performance.now() - started) / 1000).toFixed(0)} s; live tensor bytes of the weights ${formatBytes(weights)} (estimate ${formatBytes(needs.weights)})`);
  try {
    for (let round = 0; round < rounds; round++) {
      live?.resetPeak();
      fig.ours.add(tokens, await loraTiming(model, plan, rng, true));
      if (live !== null) {
        const gib = (n: number) => `${(n / 2 ** 30).toFixed(3)} GiB`;
        const peak = live.read().peak - atStart;
        const beforeSlack = needs.total / (1 + ALLOCATOR_SLACK);
        console.log(`Qwen round ${round + 1}: live tensor peak ${gib(peak)} (above the weights ${gib(peak - weights)}) vs estimate before slack ${gib(beforeSlack)} (${(peak / beforeSlack).toFixed(3)}); wasm heap ${gib(tensorHeapBytes() ?? 0)} vs printed ${gib(needs.total)}`);
      }
      const t = torchRound({ ...plan, skipInference: true, trainKinds: ['lora'] }, QWEN25_05B);
      if (typeof t === 'string') console.log(`Qwen round ${round + 1}: ${t}`);
      else fig.theirs.addRates(t.train_lora_TokPerSec, t.train_lora_TokPerCpuSec);
    }
    if (sampler !== null) await qwenSampler(model, spec, sampler, live);
    console.log(`Qwen2.5-0.5B shape: max RSS so far ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`);
  } finally {
    model.dispose();
  }
  return fig;
}

/** The table: each side's best (spread; per CPU-second), the ratios, the peak shares (of the per-CPU-second rates). */
function printTable(figures: readonly Figure[], torchVersion: string): void {
  console.log(`\n| figure | turnwise tok/s | PyTorch ${torchVersion} tok/s | ratio (wall) | ratio (CPU) | of the core's FMA peak: turnwise / PyTorch |`);
  console.log('|---|---|---|---|---|---|');
  const peak = corePeak() !== null;
  for (const f of figures) {
    const ours = f.note !== '' ? f.note : f.ours.describe('');
    const shares = peak ? `${peakShare(f.ours.bestCpu * f.flopsPerToken) || 'n/a'} / ${peakShare(f.theirs.bestCpu * f.flopsPerToken) || 'n/a'}` : 'n/a';
    console.log(`| ${f.label} | ${ours} | ${f.theirs.describe('')} | ${ratio(f.ours.best, f.theirs.best)} | ${ratio(f.ours.bestCpu, f.theirs.bestCpu)} | ${shares} |`);
  }
  console.log(`(FLOPs per token: ${figures.map((f) => `${f.label.split(' (')[0]} ${fmt(f.flopsPerToken / 1e6)} M`).join('; ')})`);
}
