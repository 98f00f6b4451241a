/**
 * The training loop of `trainRun` on one page, CleanRL-style: no bus, no actors, no worker threads,
 * one episode after another — rollout → advantages → loss → optimizer → eval, in the order a step
 * runs them. Read this first; `train-run.ts` names the files where each part lives in the real run.
 *
 * A test keeps it honest: on the quickstart config (configs/babyai-grpo.yaml) it ends with weights
 * bit-identical to `trainRun`'s (test/e2e/reference-loop.test.ts). That holds because every random
 * stream derives from the seed and what it serves (the step's tasks, each episode, each turn), so
 * running episodes one by one instead of 64 at once changes only the timing — when `trainRun`'s
 * sampler also decodes one request at a time (`runtime.samplerMaxBatch: 1`): a larger batch rounds
 * float32 differently in the last bit.
 *
 * Scope: turnwise's own model on the local engine, mode sync, a fixed horizon, a critic-free
 * estimator without running state (grpo, rloo, reinforce_pp), the PPO-clip loss, no KL reference,
 * no off-policy correction, no reward shaper, one gradient worker. Anything else is refused, naming
 * the field; `trainRun` runs it. Environment failures throw here (`trainRun` records them as
 * `error` episodes and goes on).
 */
import '../envs/index.js';
import { outcomeAfter, turnSeed } from '../actors/episode-rules.js';
import { computeAdvantages } from '../algorithms/advantages.js';
import { aggregationWeights } from '../algorithms/aggregation.js';
import { clipByGlobalNorm } from '../algorithms/grad-clip.js';
import { ppoClipLoss } from '../algorithms/losses.js';
import type { ResolvedConfig } from '../core/config.js';
import { InvalidConfigError } from '../core/errors.js';
import { Rng } from '../core/rng.js';
import type { StepResult, Trajectory, Turn } from '../core/types.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { selectBackend } from '../backend/select.js';
import { tf } from '../backend/tf.js';
import type { NamedTensors } from '../models/checkpoint.js';
import { learningRateAt } from '../learner/lr-schedule.js';
import { AdamW } from '../learner/optimizer.js';
import { packTrajectories } from '../learner/pack.js';
import { turnwiseText } from '../models/policy-text.js';
import { tokenLayout } from '../learner/token-layout.js';
import { trainBpe } from '../models/tokenizer/index.js';
import { TransformerModel } from '../models/transformer/model.js';
import { TransformerPolicy } from '../models/transformer-policy.js';
import { estimatorOptionsOf } from './algorithm-setup.js';
import { evaluationPlans } from './evaluate.js';
import { microBatchCutsOf } from './gradient-workers.js';
import { contextPolicyOf, transformerConfigOf } from './policy-stack.js';
import type { EpisodePlan } from './rollout.js';
import { summarizeEpisodes } from './rollout-metrics.js';
import { trainPlans } from './train/plans.js';

/** What {@link referenceTrain} ends with. */
export interface ReferenceResult {
  /** The trained weights under their Hugging Face names (what a checkpoint's model.safetensors holds). */
  readonly weights: NamedTensors;
  /** Held-out success rate after `step` completed steps (0 = untrained). */
  readonly evals: readonly { readonly step: number; readonly successRate: number }[];
  /** Per step: the rollout's success rate and the gradient norm before clipping. */
  readonly steps: readonly { readonly step: number; readonly successRate: number; readonly gradNorm: number }[];
}

/**
 * Trains `config.train.steps` steps as `trainRun` does, in one plain loop (no run folder is written).
 * @example const { weights, evals } = await referenceTrain(resolveConfig(loadConfig('configs/babyai-grpo.yaml')), console.log);
 */
export async function referenceTrain(config: ResolvedConfig, log: (line: string) => void = () => {}): Promise<ReferenceResult> {
  const { horizon, evalHorizon } = checkScope(config);
  const a = config.algorithm;
  await selectBackend(config.model.backend, { matmul: config.model.matmul });

  // Setup, all from the seed: the environment, a tokenizer trained on its text, the model.
  const spec = getEnvironmentSpec(config.env.name);
  const settings = config.env.settings as Record<string, unknown>;
  const catalog = spec.catalog({ settings });
  const env = spec.create({ settings });
  const instruction = env.instruction();
  const tokenizer = trainBpe(spec.corpus({ settings }, config.tokenizer.corpusEpisodes, config.seed), { vocabSize: config.tokenizer.vocabSize });
  const text = turnwiseText(tokenizer, contextPolicyOf(config));
  const model = new TransformerModel(transformerConfigOf(config, tokenizer.vocabSize), Rng.fromSeed(config.seed).fork('model'));
  const policy = new TransformerPolicy(model, { endTokenId: text.endTokenId, stopTokenIds: text.stopTokenIds });
  const sampling = { temperature: config.sampling.temperature, topP: config.sampling.topP, maxNewTokens: config.sampling.maxActionTokens };
  const samplerRng = Rng.fromSeed(config.seed).fork('sampler'); // unused: every request brings its own seed
  const optimizer = new AdamW({ lr: a.lr, beta1: a.beta1, beta2: a.beta2, epsilon: 1e-8, weightDecay: a.weightDecay, prefix: 'adam' });

  /** One episode: reset, then act (sample from the policy) and step until done or the horizon. */
  async function runEpisode(plan: EpisodePlan, step: number, maxTurns: number): Promise<Trajectory> {
    let observation = await env.reset(plan.taskIndex);
    const turns: Turn[] = [];
    let last: StepResult | null = null;
    for (;;) {
      const outcome = outcomeAfter(last, turns.length, maxTurns); // success | failure | truncated | null
      if (outcome !== null) {
        return { trajectoryId: plan.trajectoryId, taskId: plan.taskId, groupId: plan.groupId, step, turns, reward: last?.reward ?? 0, outcome, horizon: maxTurns, finalObservationText: observation.text };
      }
      // Token-in, token-out: the policy sees these ids and returns sampled ids with their log-probs.
      const pastTurns = turns.map((t) => ({ observationText: t.observationText, actionTokens: t.actionTokens }));
      const promptTokens = text.context({ instruction, pastTurns, observationText: observation.text });
      const listed = observation.availableActions;
      const actionChoices = config.sampling.constrained && listed && listed.length > 0 ? text.actionChoices(listed) : null;
      const [act] = await policy.sampleActions([{ contextTokens: promptTokens, actionChoices, seed: turnSeed(plan.seed, turns.length) }], sampling, samplerRng);
      if (act === undefined) throw new Error('the policy returned no result');
      const actionText = text.actionText(act.tokens);
      last = await env.step(actionText);
      turns.push({
        index: turns.length,
        observationText: observation.text,
        promptTokens,
        actionText,
        actionTokens: act.tokens,
        actionLogprobs: act.logprobs, // behaviour log-probs: the PPO ratio's denominator
        actionLossMask: act.lossMask, // 0 on forced tokens (a single allowed id): no choice, no loss
        constraint: act.constraint,
        policyVersion: act.policyVersion,
        reward: last.reward,
        invalidAction: last.info?.invalid === true,
      });
      observation = last.observation;
    }
  }

  async function rollout(plans: readonly EpisodePlan[], step: number, maxTurns: number): Promise<Trajectory[]> {
    const trajectories: Trajectory[] = [];
    for (const plan of plans) trajectories.push(await runEpisode(plan, step, maxTurns));
    return trajectories;
  }

  /** One learner step on a batch of trajectories; returns the mean gradient norm before clipping. */
  function update(trajectories: readonly Trajectory[], step: number): number {
    // Advantages: one value per action token, laid out [B·T]; GRPO: (reward − group mean) / group std.
    const layout = tokenLayout(trajectories, config.reward.mode);
    const T = layout.seqLen;
    const { advantages } = computeAdvantages({ rewards: layout.rewards, mask: layout.mask, seqLen: T, groupIds: layout.groupIds, turnIds: layout.turnIds, options: estimatorOptionsOf(a) });
    // A group whose episodes all scored the same teaches nothing: leave its trajectories out.
    const trains = (b: number) => layout.mask.some((m, i) => i >= b * T && i < (b + 1) * T && m === 1 && advantages[i] !== 0);
    const kept = trajectories.map((_, b) => b).filter((b) => !a.dropZeroAdvantage || trains(b));
    const variables = model.trainableVariables();
    optimizer.setLearningRate(learningRateAt(step, { lr: a.lr, warmupSteps: a.warmupSteps, kind: a.lrSchedule, totalSteps: config.train.steps, minLrRatio: a.minLrRatio }));
    let normSum = 0;
    let updates = 0;
    for (let epoch = 0; epoch < a.epochs; epoch++) {
      for (let m = 0; m < a.miniBatches; m++) {
        const ids = kept.slice(Math.floor((m * kept.length) / a.miniBatches), Math.floor(((m + 1) * kept.length) / a.miniBatches));
        // Sequences (prompt ++ action ids) padded into micro-batches of at most maxTokensPerMicroBatch tokens.
        const packed = packTrajectories(ids.map((i) => trajectories[i] as Trajectory), new Float32Array(ids.length), {
          maxTokensPerBatch: a.maxTokensPerMicroBatch,
          ...microBatchCutsOf(config),
        });
        const mask = Float32Array.from(packed.flatMap((p) => Array.from(p.signal.lossMask)));
        const tokenCount = mask.reduce((sum, x) => sum + x, 0);
        if (tokenCount === 0) continue;
        // Loss weights over the whole mini-batch (token-mean: 1 / tokens), so micro-batch gradients add up to its gradient.
        const weights = aggregationWeights(mask, Int32Array.from(packed.flatMap((p) => Array.from(p.signal.trajectoryIndex))), a.lossAgg);
        let grads = null as tf.Tensor[] | null; // summed over micro-batches
        let offset = 0;
        for (const { batch, signal } of packed) {
          const n = signal.lossMask.length;
          const tokenAdvantages = Float32Array.from({ length: n }, (_, k) => advantages[(ids[signal.trajectoryIndex[k] as number] as number) * T + (signal.tokenIndex[k] as number)] as number);
          const microWeights = weights.slice(offset, offset + n);
          offset += n;
          const micro = tf.tidy(() => {
            const { grads: byName } = tf.variableGrads(() => {
              const { logprobs, entropy } = model.forwardTrain(batch, config.sampling.temperature);
              // PPO-clip: max(−A·ρ, −A·clip(ρ, 1 − ε, 1 + ε)) with ρ = π(a|s) / π_behaviour(a|s), weighted per token.
              const loss = ppoClipLoss(
                { logprobs, entropy, oldLogprobs: tf.tensor1d(signal.oldLogprobs), advantages: tf.tensor1d(tokenAdvantages), lossMask: tf.tensor1d(signal.lossMask), refLogprobs: null, weights: tf.tensor1d(microWeights) },
                { clipRatio: a.clipRatio, klCoef: 0, entropyCoef: a.entropyCoef, tokenCount, dualClip: a.dualClip, klEstimator: a.klEstimator },
              );
              return loss.total;
            }, variables);
            return variables.map((v) => byName[v.name] ?? tf.zerosLike(v));
          });
          const previous = grads;
          grads = previous === null ? micro : previous.map((g, i) => tf.add(g, micro[i] as tf.Tensor));
          if (previous !== null) tf.dispose([...previous, ...micro]);
        }
        // Optimizer: clip the global gradient norm, then one Adam step (skipped on a non-finite norm).
        const summed = grads ?? [];
        const { clipped, norm } = clipByGlobalNorm(summed, a.gradClip ?? Number.POSITIVE_INFINITY);
        if (Number.isFinite(norm)) optimizer.apply(variables, clipped);
        tf.dispose([...summed, ...clipped]);
        normSum += norm;
        updates++;
      }
    }
    return updates > 0 ? normSum / updates : 0;
  }

  /** Held-out evaluation: one sampled episode per test task, the same seeds every time. */
  async function evaluate(completedSteps: number): Promise<{ step: number; successRate: number }> {
    const plans = evaluationPlans(config, catalog, config.env.testSplit as 'test', config.train.evalTasks);
    const { successRate } = summarizeEpisodes(await rollout(plans, completedSteps, evalHorizon));
    log(`eval after ${completedSteps} steps: success ${successRate.toFixed(3)}`);
    return { step: completedSteps, successRate };
  }

  // The loop: evaluate the untrained policy, then per step roll out, update, and evaluate on cadence.
  const evalDue = (completed: number) => config.train.evalEvery > 0 && completed % config.train.evalEvery === 0;
  const evals: { step: number; successRate: number }[] = [];
  const steps: { step: number; successRate: number; gradNorm: number }[] = [];
  const trainIndices = catalog.indices(config.env.trainSplit as 'train');
  try {
    if (evalDue(0)) evals.push(await evaluate(0));
    for (let step = 0; step < config.train.steps; step++) {
      const trajectories = await rollout(trainPlans(config, trainIndices, step, 'reference'), step, horizon);
      const gradNorm = update(trajectories, step);
      policy.setVersion(step + 1); // the sampler acts with the new weights from now on
      const { successRate } = summarizeEpisodes(trajectories);
      steps.push({ step, successRate, gradNorm });
      log(`step ${step + 1}: rollout success ${successRate.toFixed(3)}, grad norm ${gradNorm.toFixed(4)}`);
      if (evalDue(step + 1)) evals.push(await evaluate(step + 1));
    }
    return { weights: model.namedWeights(), evals, steps };
  } finally {
    optimizer.dispose();
    model.dispose();
    await env.close();
  }
}

/** Refuses what this loop does not implement, naming the field (trainRun runs all of it); returns the fixed horizon. */
function checkScope(config: ResolvedConfig): { horizon: number; evalHorizon: number } {
  const refuse = (field: string, why: string): never => {
    throw new InvalidConfigError(field, `${why}: the reference loop covers the quickstart's setting only; use trainRun (turnwise train)`);
  };
  const a = config.algorithm;
  if (config.model.from !== null) refuse('model.from', 'a pretrained model');
  if (config.model.engine !== 'local') refuse('model.engine', `engine '${config.model.engine}'`);
  if (config.mode !== 'sync') refuse('mode', `mode '${config.mode}'`);
  if (!['grpo', 'rloo', 'reinforce_pp'].includes(a.name)) refuse('algorithm.name', `algorithm '${a.name}' (a critic or running estimator state)`);
  if (a.klCoef !== 0) refuse('algorithm.klCoef', 'a KL reference');
  if (a.policyLoss !== 'ppo-clip') refuse('algorithm.policyLoss', `policy loss '${a.policyLoss}'`);
  if (config.offPolicy.correction !== 'none') refuse('offPolicy.correction', `correction '${config.offPolicy.correction}'`);
  if (config.reward.shaper !== null) refuse('reward.shaper', 'a reward shaper');
  // auto is 1 here: the loop computes its gradients in this thread (a count gives the same numbers anyway).
  if (config.train.dataParallel !== 1 && config.train.dataParallel !== 'auto') refuse('train.dataParallel', 'data parallelism');
  const h = config.horizon;
  if (h.schedule !== 'fixed') return refuse('horizon.schedule', `schedule '${h.schedule}'`);
  return { horizon: h.horizon, evalHorizon: h.evalHorizon ?? config.derived.maxHorizon };
}
