import { describe, expect, it } from 'vitest';
import { computeAdvantages } from '../../src/algorithms/advantages.js';
import type { LossAggregation } from '../../src/algorithms/aggregation.js';
import { SamplerWeightsRegistry } from '../../src/engines/engine-policy.js';
import { EngineTrainer } from '../../src/engines/engine-trainer.js';
import type { LossReduction } from '../../src/engines/engine.js';
import { tokenLayout } from '../../src/learner/token-layout.js';
import { DEFAULT_TRAIN_STEP_OPTIONS } from '../../src/learner/train-options.js';
import { sampleTrajectories } from './fixtures.js';
import { RecordingEngine } from './recording-engine.js';

const schedule = { warmupSteps: 0, kind: 'constant' as const, totalSteps: 10, minLrRatio: 0 };

function trainerOn(engine: RecordingEngine, registry = new SamplerWeightsRegistry()): EngineTrainer {
  return new EngineTrainer({ engine, registry, samplerPrefix: 'run', lr: 1e-4, beta1: 0.9, beta2: 0.99, weightDecay: 0.01, schedule });
}

/**
 * What each trained token's advantage should weigh in the objective, written out by hand per mode:
 * token-mean 1/N; seq-mean-token-mean 1/(S·n_s); seq-mean-token-sum 1/S (S sequences = trajectories).
 */
function expectedWeights(mode: LossAggregation): Map<string, number> {
  // Trained tokens per trajectory of the fixture: a1 3, a2 4, b1 2 (one forced), b2 1.
  const perTrajectory = [3, 4, 2, 1];
  const total = perTrajectory.reduce((a, b) => a + b, 0);
  const weights = new Map<string, number>();
  perTrajectory.forEach((n, b) => {
    const w = mode === 'token-mean' ? 1 / total : mode === 'seq-mean-token-sum' ? 1 / perTrajectory.length : 1 / (perTrajectory.length * n);
    weights.set(String(b), w);
  });
  return weights;
}

describe('EngineTrainer', () => {
  const trajectories = sampleTrajectories();
  const layout = tokenLayout(trajectories);
  const grpo = computeAdvantages({ rewards: layout.rewards, mask: layout.mask, seqLen: layout.seqLen, groupIds: layout.groupIds, turnIds: layout.turnIds, options: DEFAULT_TRAIN_STEP_OPTIONS.estimator });
  const advantageOf = (b: number): number => grpo.advantages[b * layout.seqLen] as number;

  for (const rule of ['sum', 'sequence-mean'] as LossReduction[]) {
    for (const mode of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum'] as LossAggregation[]) {
      it(`makes lossAgg ${mode} come out under the engine's '${rule}' reduction`, async () => {
        const engine = new RecordingEngine(rule);
        await trainerOn(engine).trainStep(trajectories, { lossAggregation: mode, dropZeroAdvantage: false });
        const [pass] = engine.passes;
        if (pass === undefined) throw new Error('no forward-backward was sent');
        const weights = expectedWeights(mode);
        const D = pass.data.length;
        // Under the server's rule, token t of datum d weighs A'_t (sum) or A'_t / (D · W_d) (sequence-mean).
        // Map each datum back to its trajectory by its tokens: the fixture's sequences are distinct.
        let checked = 0;
        for (const d of pass.data) {
          const W = d.weights.reduce((a, w) => a + w, 0);
          const b = trajectories.findIndex((t) => t.turns.some((turn) => turn.promptTokens.every((id, i) => d.inputTokens[i] === id) && turn.promptTokens.length <= d.inputTokens.length && d.targetTokens.includes(turn.actionTokens[0] as number)));
          for (let t = 0; t < d.weights.length; t++) {
            if (d.weights[t] === 0) {
              expect(d.advantages?.[t]).toBe(0);
              continue;
            }
            const effective = rule === 'sum' ? (d.advantages?.[t] as number) : (d.advantages?.[t] as number) / (D * W);
            expect(effective).toBeCloseTo((weights.get(String(b)) as number) * advantageOf(b), 6);
            checked++;
          }
        }
        expect(checked).toBe(10); // every trained token of the fixture
      });
    }
  }

  it('sends the ppo loss with the configured clip range and Adam with the scheduled learning rate', async () => {
    const engine = new RecordingEngine('sum');
    const trainer = trainerOn(engine);
    await trainer.trainStep(trajectories, { clipRatio: 0.28, gradClip: 0.5, dropZeroAdvantage: false });
    expect(engine.passes[0]?.loss).toBe('ppo');
    expect(engine.passes[0]?.config?.clip_low_threshold).toBeCloseTo(0.72, 12);
    expect(engine.passes[0]?.config?.clip_high_threshold).toBeCloseTo(1.28, 12);
    expect(engine.steps).toEqual([{ learningRate: 1e-4, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, gradClipNorm: 0.5 }]);
  });

  it('runs one forward-backward and one optimizer step per mini-batch and epoch, then saves the new version for sampling', async () => {
    const engine = new RecordingEngine('sum');
    const registry = new SamplerWeightsRegistry();
    const trainer = trainerOn(engine, registry);
    const metrics = await trainer.trainStep(trajectories, { miniBatches: 2, epochs: 2, dropZeroAdvantage: false });
    expect(engine.passes).toHaveLength(4);
    expect(engine.steps).toHaveLength(4);
    expect(trainer.version).toBe(1);
    expect(engine.saved).toEqual(['run-v000001']);
    expect(registry.get(1)).toEqual({ path: 'tinker://model/sampler_weights/run-v000001' });
    expect(metrics['policy/version']).toBe(1);
    expect(metrics['optim/gradNorm']).toBe(0.5);
    // Ratio 1 everywhere: nothing clipped, no KL between old and new.
    expect(metrics['loss/clipFrac']).toBe(0);
    expect(metrics['loss/approxKl']).toBe(0);
  });

  it('sends no trajectory of a uniform group when dropZeroAdvantage is on', async () => {
    const engine = new RecordingEngine('sum');
    const uniform = sampleTrajectories().map((t) => ({ ...t, reward: t.groupId === 'g2' ? 1 : t.reward }));
    await trainerOn(engine).trainStep(uniform, { dropZeroAdvantage: true });
    const sent = engine.passes[0]?.data ?? [];
    // g2's two trajectories both scored 1: only g1's three sequences go out.
    expect(sent).toHaveLength(3);
  });

  it("folds the KL to the base into the reward from the engine's base log-probs", async () => {
    const engine = new RecordingEngine('sum');
    engine.baseLogprob = -2;
    const metrics = await trainerOn(engine).trainStep(trajectories, { klCoef: 0.1, klPlacement: 'reward', klEstimator: 'k1', dropZeroAdvantage: false });
    // k1 = logp - logp_ref, token-mean over the 10 trained tokens of the fixture.
    const sampled = [-0.5, -0.25, -1, -1.5, -0.5, -2, -0.125, -0.75, -1.25, -3];
    const expected = sampled.reduce((a, lp) => a + (lp + 2), 0) / sampled.length;
    expect(metrics['kl/reward']).toBeCloseTo(expected, 6);
  });

  it('refuses options an engine cannot honour, naming them', async () => {
    const trainer = trainerOn(new RecordingEngine('sum'));
    await expect(trainer.trainStep(trajectories, { entropyCoef: 0.01 })).rejects.toThrow(/entropyCoef/);
    await expect(trainer.trainStep(trajectories, { klCoef: 0.1, klPlacement: 'loss' })).rejects.toThrow(/klPlacement/);
    await expect(trainer.trainStep(trajectories, { dualClip: 3 })).rejects.toThrow(/dualClip/);
  });

  it('keeps its estimator state and version across getState/setState', async () => {
    const engine = new RecordingEngine('sum');
    const trainer = trainerOn(engine);
    await trainer.trainStep(trajectories, { estimator: { name: 'reinforce', gamma: 1, baselineMomentum: 0.9 }, dropZeroAdvantage: false });
    const restored = trainerOn(new RecordingEngine('sum'));
    restored.setState(trainer.getState());
    expect(restored.version).toBe(1);
    expect(restored.getState()).toEqual(trainer.getState());
  });
});
