/**
 * The run stack of `model.engine: tinker`: the weights live on a model engine (a Tinker server),
 * this process keeps the text side (the tokenizer, chat template and stop ids of `model.from`, a
 * folder that needs no weights), the learner's step ({@link EngineTrainer}: advantages here, the loss
 * and Adam on the engine) and a sampler policy that asks the engine ({@link EnginePolicy}).
 *
 * Checkpoints: the training state (weights and optimizer) is saved on the engine and its path kept
 * in `trainer_state.json`; the sampler adapter is downloaded into the checkpoint folder as PEFT
 * files, so `eval`, `serve` and `merge` work on it locally when the base model's weights are at hand.
 * `train --resume` opens a new model on the engine from the saved state and continues the same run.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { ResolvedConfig } from '../core/config.js';
import { CheckpointError, InvalidConfigError } from '../core/errors.js';
import { EnginePolicy, SamplerWeightsRegistry } from '../engines/engine-policy.js';
import { EngineTrainer } from '../engines/engine-trainer.js';
import type { EngineFactory, ModelEngine, SamplerWeights } from '../engines/engine.js';
import type { EnvironmentSpec } from '../envs/environment.js';
import { readChatModelFileContents } from '../models/chat/index.js';
import type { CheckpointContent, NamedTensors } from '../models/checkpoint.js';
import { adapterConfigJson, LORA_TARGETS, type LoraTarget } from '../models/lora/lora.js';
import { chatText } from '../models/policy-text.js';
import { readSafetensors } from '../models/safetensors.js';
import { trainerSettingsOf } from './algorithm-setup.js';
import { openTinkerEngineFactory } from './open-tinker.js';
import { buildPolicyStack, optimizerTensors } from './policy-stack.js';
import { chatTextOptionsOf } from './pretrained-stack.js';
import type { RunStack } from './run-stack.js';

/** Where an engine run's checkpoint keeps the engine side (`trainer_state.json` → `engine`). */
export interface EngineCheckpointState {
  /** The engine's path of the saved training state (weights + optimizer). */
  readonly statePath: string;
  /** The engine's path of the sampler weights of this version. */
  readonly samplerPath: string;
  readonly baseModel: string;
  /** The engine, as the run header named it (never a secret). */
  readonly engine: string;
}

/**
 * The run's stack for its engine: {@link buildEngineStack} for `model.engine: tinker`, else turnwise's own (`policy-stack.ts`).
 * @example const stack = await buildRunStack(config, spec, checkpoint);
 */
export async function buildRunStack(config: ResolvedConfig, spec: EnvironmentSpec, checkpoint: CheckpointContent | null, factory?: EngineFactory): Promise<RunStack> {
  if (config.model.engine === 'local') return buildPolicyStack(config, spec, checkpoint);
  return buildEngineStack(config, checkpoint, factory ?? openTinkerEngineFactory(config));
}

/** The model's own context limit from its config.json (`max_position_embeddings`), capped by `model.maxContext`. */
async function contextLimitOf(folder: string, cap: number): Promise<number> {
  const path = join(folder, 'config.json');
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    throw new InvalidConfigError('model.from', `${path}: cannot read the model's config.json (${(err as Error).message})`, { cause: err });
  }
  const own = raw.max_position_embeddings;
  return typeof own === 'number' && Number.isInteger(own) && own > 0 ? Math.min(own, cap) : cap;
}

/** The engine-side state a checkpoint recorded, checked. */
function engineStateOf(checkpoint: CheckpointContent): EngineCheckpointState {
  const state = checkpoint.state.engine as Partial<EngineCheckpointState> | undefined;
  if (state === undefined || typeof state.statePath !== 'string' || typeof state.samplerPath !== 'string') {
    throw new CheckpointError('trainer_state.json', "has no 'engine' section with the engine's statePath: this checkpoint was not written by a model.engine: tinker run");
  }
  return state as EngineCheckpointState;
}

/**
 * Builds the stack of an engine run, fresh or resumed from `checkpoint`.
 * @example const stack = await buildEngineStack(config, null, async (r) => myEngine);
 */
export async function buildEngineStack(config: ResolvedConfig, checkpoint: CheckpointContent | null, factory: EngineFactory): Promise<RunStack> {
  const folder = config.model.from as string;
  const tinker = config.model.tinker;
  const lora = config.model.lora;
  if (tinker === null || lora === null) throw new InvalidConfigError('model.engine', "'tinker' needs model.tinker and model.lora");
  const maxContext = await contextLimitOf(folder, config.model.maxContext);
  const text = chatText(await readChatModelFileContents(folder), chatTextOptionsOf(config, maxContext), folder);
  const baseModel = tinker.baseModel ?? basename(resolve(folder));
  const resumed = checkpoint === null ? null : engineStateOf(checkpoint);
  const engine = await factory({ baseModel, loraRank: lora.rank, seed: tinker.loraSeed ?? (config.seed >>> 0) % 2 ** 31, resumeFrom: resumed?.statePath ?? null });
  try {
    const registry = new SamplerWeightsRegistry();
    const version = checkpoint ? Number(checkpoint.state.policyVersion ?? 0) : 0;
    const { lr, beta1, beta2, weightDecay, schedule, klTarget, klHorizon } = trainerSettingsOf(config);
    const trainer = new EngineTrainer({
      engine,
      registry,
      samplerPrefix: 'turnwise',
      lr,
      beta1: beta1 ?? 0.9,
      beta2: beta2 ?? 0.99,
      weightDecay: weightDecay ?? 0,
      schedule: schedule ?? { warmupSteps: 0, kind: 'constant', totalSteps: 1, minLrRatio: 0 },
      ...(klTarget !== undefined ? { klTarget } : {}),
      ...(klHorizon !== undefined ? { klHorizon } : {}),
      initialVersion: version,
    });
    if (checkpoint !== null) trainer.setState({ version, optimizer: [...checkpoint.optimizer].map(([name, t]) => ({ name, shape: t.shape, data: t.data })) });
    // The version the sampler starts on, saved on this model (a resumed run has a new model on the engine).
    registry.set(version, await engine.saveWeightsForSampler(trainer.samplerName(version)));
    const policy = new EnginePolicy({ engine, registry, version, stopTokenIds: text.stopTokenIds });
    const notes = [
      `model engine: ${engine.description}; base model ${baseModel}; LoRA rank ${lora.rank} (alpha, dropout and target modules are the engine's)`,
      `losses reduced by the engine's '${engine.capabilities.reduction}' rule; turnwise scales the advantages it sends so that lossAgg '${config.algorithm.lossAgg}' comes out as configured`,
      ...(config.algorithm.klCoef > 0 ? [`KL to the base (${config.algorithm.klEstimator}, coef ${config.algorithm.klCoef}) from the engine's base log-probs, folded into the reward`] : []),
      ...(resumed !== null ? [`resumed on the engine from ${resumed.statePath}`] : []),
    ];
    let closed: Promise<void> | null = null;
    // Closing never fails the run: a model left loaded is unloaded by the server once the session's
    // heartbeats stop, and an error here would hide the one that ended the run.
    const close = (): Promise<void> => {
      closed ??= engine.close().catch(() => {});
      return closed;
    };
    return {
      text,
      policy,
      trainer,
      maxContext,
      summary: `LoRA r${lora.rank} on ${baseModel} (${engine.description})`,
      notes,
      samplerWeights: (): NamedTensors => new Map(),
      checkpointContent: async (step, state) => {
        const statePath = await engine.saveState(`turnwise-step-${String(step).padStart(6, '0')}`);
        const sampler = registry.get(trainer.version);
        if (sampler === 'base') throw new CheckpointError(`step ${step}`, 'no sampler weights were saved for the current version');
        const adapter = await downloadedAdapter(engine, sampler);
        const engineState: EngineCheckpointState = { statePath, samplerPath: sampler.path, baseModel, engine: engine.description };
        return {
          step,
          hfConfig: JSON.parse(await readFile(join(folder, 'config.json'), 'utf8')) as object,
          weights: adapter.weights,
          adapterConfig: adapterConfigJson({ rank: adapter.rank, alpha: adapter.alpha, dropout: 0, targets: adapter.targets, rsLora: false }, resolve(folder)),
          tokenizerJson: JSON.parse(text.files({ modelMaxLength: maxContext, maxNewTokens: config.sampling.maxActionTokens }).find((f) => f.name === 'tokenizer.json')?.data ?? '{}') as object,
          extraFiles: text.files({ modelMaxLength: maxContext, maxNewTokens: config.sampling.maxActionTokens }).filter((f) => f.name !== 'tokenizer.json'),
          optimizer: optimizerTensors(trainer.getState()),
          state: { policyVersion: trainer.version, engine: engineState, ...state },
        };
      },
      dispose: () => {
        void close();
      },
      close,
    };
  } catch (err) {
    await engine.close().catch(() => {});
    throw err;
  }
}

/** A downloaded sampler adapter: its tensors (PEFT names) and the LoRA settings they imply. */
interface DownloadedAdapter {
  readonly weights: NamedTensors;
  readonly rank: number;
  readonly alpha: number;
  readonly targets: LoraTarget[];
}

/**
 * Downloads `sampler` as PEFT files and reads them back. The targets come from the tensors present
 * (SkyRL writes `target_modules: null`, which PEFT would read as its per-model default).
 */
async function downloadedAdapter(engine: ModelEngine, sampler: SamplerWeights): Promise<DownloadedAdapter> {
  const dir = await mkdtemp(join(tmpdir(), 'turnwise-adapter-'));
  try {
    await engine.downloadAdapter(sampler, dir);
    const configPath = join(dir, 'adapter_config.json');
    const json = JSON.parse(await readFile(configPath, 'utf8')) as Record<string, unknown>;
    const path = join(dir, 'adapter_model.safetensors');
    const { tensors } = await readSafetensors(path);
    const weights: NamedTensors = new Map();
    const targets = new Set<LoraTarget>();
    let rank = 0;
    for (const [name, t] of Object.entries(tensors)) {
      if (t.dtype !== 'F32') throw new CheckpointError(path, `tensor '${name}' has dtype ${t.dtype}; expected F32`);
      weights.set(name, { shape: [...t.shape], data: t.data });
      const target = LORA_TARGETS.find((m) => name.includes(`.${m}.lora_`));
      if (target === undefined) throw new CheckpointError(path, `tensor '${name}' is not a LoRA matrix of ${LORA_TARGETS.join(', ')}`);
      targets.add(target);
      if (name.includes('.lora_A.')) rank = t.shape[0] as number;
    }
    const alpha = typeof json.lora_alpha === 'number' ? json.lora_alpha : Number.NaN;
    if (!(alpha > 0) || !(rank > 0)) throw new CheckpointError(configPath, `the engine's adapter has lora_alpha ${String(json.lora_alpha)} and rank ${rank}`);
    return { weights, rank, alpha, targets: LORA_TARGETS.filter((m) => targets.has(m)) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
