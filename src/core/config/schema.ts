/**
 * The config schema: one zod schema, nested by concern, a `.describe()` line on every
 * field, `.strict()` objects so that a misspelt key is an error, defaults filled in. YAML files,
 * the CLI and the table in docs/configuration.md all come from it.
 */
import { z } from 'zod';
import { engineIssues } from './engine-checks.js';
import { engineSchema, tinkerSchema } from './engine-schema.js';
import { type AlgorithmConfig, algorithmSchema, type CustomAlgorithmConfig } from './algorithm-schema.js';
import { alarmsSchema } from './alarm-schema.js';
import { rewardSchema } from './reward-schema.js';

const posInt = () => z.number().int().positive();
const nonNegInt = () => z.number().int().min(0);

const runSchema = z
  .object({
    dir: z.string().min(1).default('runs').describe('Folder that holds run folders.'),
    name: z
      .string()
      .max(128)
      // One path segment: no separator or `..` can put the run folder outside run.dir.
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, { error: 'expected a file name of letters, digits, ".", "_" and "-" (starting with a letter or digit; no "/" or "..")' })
      .default('babyai-grpo')
      .describe('Run name; the run folder is <dir>/<name>. A file name: letters, digits, ".", "_" and "-", starting with a letter or digit, at most 128 characters.'),
  })
  .strict();

const envSchema = z
  .object({
    name: z.string().min(1).default('babyai').describe('Environment name in the registry (babyai, textcraft, ...).'),
    settings: z
      .record(z.string(), z.unknown())
      .default({ levels: ['GoToRedBall'] })
      .describe('Environment-specific settings, passed to the environment factory as they are (the default is BabyAI\'s; any other `env.name` without settings gets `{}`).'),
    trainSplit: z.string().min(1).default('train').describe('Task split used for training rollouts.'),
    testSplit: z.string().min(1).default('test').describe('Task split used for evaluation.'),
    workers: nonNegInt()
      .default(0)
      .describe('Worker threads (piscina) that run the environment instances, batched per event-loop turn; 0 runs them in-process (best for light environments). Built-in environments only.'),
  })
  .strict();

const tokenizerSchema = z
  .object({
    vocabSize: z.number().int().min(16).default(512).describe('Vocabulary size of the BPE tokenizer trained on environment text.'),
    corpusEpisodes: posInt().default(400).describe('Episodes of random play collected to train the tokenizer.'),
  })
  .strict();

const loraSchema = z
  .object({
    rank: posInt().default(16).describe('r: rank of each low-rank update.'),
    alpha: z.number().positive().default(32).describe('lora_alpha: updates are scaled by alpha / rank (alpha / sqrt(rank) with rsLora).'),
    dropout: z.number().min(0).lt(1).default(0.05).describe("lora_dropout: dropout on the adapters' inputs while training."),
    targetModules: z
      .array(z.enum(['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj']))
      .min(1)
      .default(['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'])
      .describe('Projections that get an adapter (PEFT target_modules names).'),
    rsLora: z.boolean().default(false).describe('Rank-stabilised scaling alpha / sqrt(rank).'),
  })
  .strict();

const modelSchema = z
  .object({
    from: z
      .string()
      .min(1)
      .nullable()
      .default(null)
      .describe(
        "A Hugging Face model folder (config.json, safetensors, tokenizer.json, chat template) to start from: llama, mistral, qwen2 or qwen3. null trains turnwise's own small model from scratch. The shape fields below (dModel ... tieEmbeddings) and the tokenizer section are then the folder's, and setting them is an error.",
      ),
    engine: engineSchema,
    tinker: tinkerSchema.nullable().default(null).describe('The Tinker API server of model.engine: tinker (null with the local engine).'),
    lora: loraSchema
      .nullable()
      .default(null)
      .describe('LoRA adapters on a frozen base (PEFT-compatible files; the KL reference is the base with adapters off), or null for full fine-tuning.'),
    dModel: posInt().default(64).describe('Transformer width (embedding size).'),
    nLayers: posInt().default(2).describe('Number of transformer blocks.'),
    nHeads: posInt().default(4).describe('Attention heads per block; must divide dModel.'),
    ffnHidden: posInt().default(172).describe('Hidden size of the SwiGLU feed-forward layer.'),
    maxContext: posInt()
      .default(256)
      .describe("Maximum context length in tokens (prompt + action); with model.from, the smaller of this and the model's own limit."),
    ropeTheta: z.number().positive().default(10000).describe('Base of the rotary position embedding.'),
    tieEmbeddings: z.boolean().default(false).describe('Share the input embedding and output projection weights.'),
    backend: z
      .enum(['auto', 'tensorflow', 'wasm', 'cpu'])
      .default('auto')
      .describe('Tensor backend: auto picks tfjs-node when installed, then wasm, then cpu.'),
    matmul: z
      .enum(['auto', 'native', 'wasm'])
      .default('auto')
      .describe(
        "Matrix products on the wasm backend: auto runs them on a native BLAS (OpenBLAS, through turnwise's addon) when it loads, else in wasm; native requires it; wasm never uses it. One BLAS thread unless OPENBLAS_NUM_THREADS says otherwise (always 1 with train.dataParallel > 1).",
      ),
  })
  .strict();

const chatSchema = z
  .object({
    system: z
      .string()
      .nullable()
      .default(null)
      .describe("System message of every episode; null leaves it to the chat template (which may add its own default, e.g. Qwen2.5's)."),
    acknowledge: z
      .string()
      .nullable()
      .default("OK. I'll follow your instructions and try my best to solve the task.")
      .describe("Assistant reply placed after the instruction (AgentGym's conversation_start; not trained on), before the first observation; null puts the instruction and the first observation in one user message."),
    maxResponseTokens: posInt()
      .default(8192)
      .describe("Most tokens of the whole interaction after the first prompt (AgentGym-RL's max_response_length: replies, observations, scaffolding); an episode that would pass it ends truncated by length."),
  })
  .strict();

const contextSchema = z
  .object({
    format: z
      .enum(['auto', 'turnwise', 'chat'])
      .default('auto')
      .describe("How a turn's context is laid out: turnwise's compact special-token layout, or the model's chat template (instruction and observations as user messages, replies as assistant messages, as AgentGym runs agents); auto = chat with model.from, else turnwise."),
    chat: chatSchema.prefault({}).describe('The chat layout (context.format chat).'),
    actions: z
      .enum(['auto', 'listed', 'text', 'tools'])
      .default('auto')
      .describe(
        "How the agent's actions reach the environment: listed (decoding constrained to the environment's available actions), text (free text the environment parses, AgentGym's 'Thought: … Action: …'), tools (the environment's tools passed to the chat template, one call per reply in the model family's format, results as tool messages; a reply without exactly one valid call is an invalid action whose observation is the error); auto = tools when the environment declares tools and the model's template takes them, else listed or text as sampling.constrained says.",
      ),
    history: z
      .union([nonNegInt(), z.literal('full'), z.literal('auto')], { error: "expected a non-negative integer, 'full' or 'auto'" })
      .default('auto')
      .describe("Past turns kept in the context: a count, or 'full' for the whole episode; auto = 0 for turnwise's own layout (memoryless tasks), 'full' for the chat layout (as AgentGym keeps the whole conversation)."),
    includeInstruction: z.boolean().default(false).describe("Prepend the environment's instruction text to every context."),
  })
  .strict();

const samplingSchema = z
  .object({
    temperature: z.number().positive().default(1).describe('Sampling temperature for rollouts.'),
    topP: z.number().gt(0).max(1).default(1).describe('Nucleus sampling mass for rollouts (1 = off).'),
    maxActionTokens: posInt().default(24).describe('Maximum tokens generated per turn (an action, or a whole "Thought: ... Action: ..." reply in free generation).'),
    constrained: z.boolean().default(true).describe("Restrict decoding to the environment's available actions when it lists them."),
  })
  .strict();


const evalHorizonField = () =>
  posInt().optional().describe('Horizon of held-out evaluations (default: the largest horizon the schedule can reach); set it to compare schedules at one horizon.');

const fixedHorizonSchema = z
  .object({
    schedule: z.literal('fixed').describe('One horizon for the whole run.'),
    horizon: posInt().default(5).describe('Maximum agent turns per episode.'),
    evalHorizon: evalHorizonField(),
  })
  .strict();

const stepwiseHorizonSchema = z
  .object({
    schedule: z.literal('stepwise').describe('ScalingInter-RL: raise the horizon stage by stage.'),
    horizons: z.array(posInt()).min(1).describe('Horizon of each stage, in order (e.g. [5, 8, 10]).'),
    every: posInt().describe('Training steps per stage before moving to the next horizon.'),
    evalHorizon: evalHorizonField(),
  })
  .strict();

const linearHorizonSchema = z
  .object({
    schedule: z.literal('linear').describe('Raise the horizon by a fixed number of turns every N steps, up to a maximum.'),
    start: posInt().describe('Horizon of the first stage.'),
    step: posInt().describe('Turns added per stage.'),
    every: posInt().describe('Training steps per stage.'),
    max: posInt().describe('Largest horizon, held once reached.'),
    evalHorizon: evalHorizonField(),
  })
  .strict();

const adaptiveHorizonSchema = z
  .object({
    schedule: z.literal('adaptive').describe('Raise the horizon when the current one is mastered, binding or plateaued; optionally lower it on collapse.'),
    start: posInt().describe('Horizon of the first stage (also the floor when lowering).'),
    step: posInt().describe('Turns added or removed per change.'),
    max: posInt().describe('Largest horizon.'),
    window: posInt().default(5).describe('Steps in the rolling signal windows (restarted at every change).'),
    cooldown: nonNegInt().default(5).describe('Steps after a change before another change is considered.'),
    successAbove: z.number().min(0).max(1).optional().describe('Raise when the rolling rollout success rate reaches this (mastered).'),
    truncationAbove: z.number().min(0).max(1).optional().describe('Raise when the rolling truncation rate reaches this (the horizon binds).'),
    patience: posInt().optional().describe('Raise when the rolling success has not improved by minDelta for this many steps (plateau).'),
    minDelta: z.number().min(0).default(0.02).describe('Smallest rolling-success improvement that resets the plateau counter.'),
    lower: z
      .object({
        entropyBelow: z.number().min(0).optional().describe('Lower when the rolling per-turn action entropy (rollout/actionEntropy, nats) falls below this.'),
        rewardStdBelow: z.number().min(0).optional().describe('Lower when the rolling reward std falls below this while the rolling success is under 0.5.'),
      })
      .strict()
      .optional()
      .describe('Lower the horizon one stage on collapse; absent: never lower.'),
    evalHorizon: evalHorizonField(),
  })
  .strict();

/** One environment's horizon schedule. */
const singleHorizonSchema = z.discriminatedUnion('schedule', [fixedHorizonSchema, stepwiseHorizonSchema, linearHorizonSchema, adaptiveHorizonSchema]);

const perEnvHorizonSchema = z
  .object({
    schedule: z.literal('per-env').describe('A schedule per environment name (multi-environment runs; a run uses its env.name entry).'),
    envs: z.record(z.string().min(1), singleHorizonSchema).describe('Environment name -> its schedule.'),
    // z.lazy keeps the docs table from listing every schedule's fields a second time under horizon.default.
    default: z.lazy(() => singleHorizonSchema).optional().describe('Schedule of environments not listed in envs (same shape as one envs entry).'),
  })
  .strict();

const horizonSchema = z
  .discriminatedUnion('schedule', [fixedHorizonSchema, stepwiseHorizonSchema, linearHorizonSchema, adaptiveHorizonSchema, perEnvHorizonSchema])
  .prefault({ schedule: 'fixed' })
  .describe('Maximum agent turns per episode, fixed or scheduled (ScalingInter-RL), or a schedule per environment.');

const trainSchema = z
  .object({
    steps: posInt().default(60).describe('Training steps (rollout + update) to run.'),
    evalEvery: nonNegInt().default(10).describe('Evaluate on the test split every N steps (0 = never).'),
    evalTasks: posInt().default(256).describe('Test tasks per evaluation.'),
    checkpointEvery: nonNegInt().default(10).describe('Save a checkpoint every N steps (0 = only at the end).'),
    logEvery: posInt().default(1).describe('Write metrics every N steps.'),
    dataParallel: z
      .union([posInt(), z.literal('auto')], { error: "expected a positive integer or 'auto'" })
      .default('auto')
      .describe(
        "Learner gradient workers (threads, each with its own tfjs backend): each takes whole micro-batches and their gradients are added in micro-batch order before one optimizer step, so any count gives the same numbers. 1 = compute in the learner thread; auto = one per core (at most 4) for turnwise's own model in mode sync, else 1 (printed in the header line).",
      ),
    evalOverlap: z
      .boolean()
      .default(true)
      .describe(
        "Mode sync: run each held-out evaluation beside the next step's rollout and gradients (same weights; the next weight publish and step log wait for it), with the same results as alone; false runs it alone, between the steps.",
      ),
    export: z
      .enum(['none', 'tensorboard'])
      .default('none')
      .describe(
        'Live metrics export: tensorboard also writes every logged metric to an events.out.tfevents.* file next to run.db as training runs (view with tensorboard --logdir runs); none keeps them in run.db only (turnwise export converts later).',
      ),
  })
  .strict();

const runtimeSchema = z
  .object({
    bus: z.enum(['memory', 'nats']).default('memory').describe('Message bus: in-process, or a NATS server (nats needs the run started with --nats <url>, which picks it by itself too).'),
    samplerMaxBatch: posInt().default(128).describe('Most act() requests the sampler batches into one forward pass.'),
    samplerMaxWaitMs: z.number().min(0).default(2).describe('How long the sampler waits to fill a batch, in milliseconds.'),
    requestTimeoutMs: posInt().default(60000).describe('Timeout of bus requests between actors, in milliseconds.'),
    envTimeoutMs: posInt().default(30000).describe('Timeout of one environment reset or step, in milliseconds.'),
    kvCacheMiB: z
      .number()
      .min(0)
      .default(128)
      .describe("Per-episode KV caches the sampler keeps between an episode's turns, in MiB (about 1 KiB per cached token on the default model); least recently used beyond it are evicted, 0 keeps none."),
    inferenceWorkers: z
      .union([nonNegInt(), z.literal('auto')], { error: "expected a non-negative integer or 'auto'" })
      .default('auto')
      .describe(
        "Worker threads that run the sampler's model (each with its own tensor backend), so sampling never blocks the main thread; 0 runs it on the main thread. auto: one per core, less one when a learner trains at the same time (modes one-step-off and async); one for a pretrained model (model.from), whose workers each read its weights.",
      ),
  })
  .strict();

const asyncSchema = z
  .object({
    maxStaleness: nonNegInt()
      .default(1)
      .describe('η: most policy versions between the weights that produced a token and the learner that trains on it (async mode); samplers pause new episodes rather than exceed it.'),
    partialRollout: z
      .enum(['continue', 'finish-old'])
      .default('continue')
      .describe('Episodes in flight at a weight update: continue with the new weights (versions recorded per turn), or finish with the old ones (the update waits for them).'),
    weightSyncTimeoutMs: posInt()
      .default(120000)
      .describe('Longest wait for samplers to load new weights, in milliseconds; a lost update fails the run instead of hanging it.'),
  })
  .strict();

const offPolicySchema = z
  .object({
    correction: z
      .enum(['none', 'tis', 'decoupled'])
      .default('none')
      .describe('Off-policy correction: none (PPO-clip on behaviour log-probs), tis (truncated importance sampling), decoupled (AReaL decoupled PPO with a recomputed proximal policy).'),
    cap: z.number().positive().default(2).describe('C: cap of the behaviour importance weight (tis and decoupled).'),
  })
  .strict();

/** The full config schema. Parse with `parseConfig` (errors become `InvalidConfigError`). */
export const configSchema = z
  .object({
    seed: z.number().int().default(1).describe('Root random seed; every component forks its own stream from it.'),
    run: runSchema.prefault({}).describe('Where the run is written.'),
    env: envSchema.prefault({}).describe('The environment agents act in.'),
    tokenizer: tokenizerSchema.prefault({}).describe('Tokenizer trained on environment text.'),
    model: modelSchema.prefault({}).describe('Decoder-only transformer policy.'),
    context: contextSchema.prefault({}).describe('How a turn context is built from the episode so far.'),
    sampling: samplingSchema.prefault({}).describe('How actions are generated during rollouts.'),
    algorithm: algorithmSchema.prefault({}).describe('RL algorithm (grpo, rloo, reinforce_pp, reinforce, ppo, or the name of an estimator registered with registerAdvantageEstimator, whose settings go in algorithm.settings), its loss and optimizer.'),
    reward: rewardSchema.prefault({}).describe('Which rewards are trained on (outcome, sum of turn rewards, outcome plus shaped) and the process-reward hook.'),
    horizon: horizonSchema,
    train: trainSchema.prefault({}).describe('Length of training and how often to evaluate and save.'),
    runtime: runtimeSchema.prefault({}).describe('Bus, batching and timeouts.'),
    mode: z
      .enum(['sync', 'one-step-off', 'async'])
      .default('sync')
      .describe('Training loop: sync (rollout then train), one-step-off (next batch generated with weights one version old), async (continuous generation under the staleness bound).'),
    async: asyncSchema.prefault({}).describe('Asynchronous training: staleness bound, partial rollouts, weight-sync timeout (modes one-step-off and async).'),
    offPolicy: offPolicySchema.prefault({}).describe('Off-policy correction of the policy loss for stale data.'),
    alarms: alarmsSchema.prefault({}).describe('Collapse alarms checked after every step (entropy, reward variance, echo trap, gradient norm, KL), each with its threshold and action.'),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.model.from === null && config.model.dModel % config.model.nHeads !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['model', 'nHeads'],
        message: `must divide model.dModel (${config.model.dModel}), got ${config.model.nHeads}`,
      });
    }
    if (config.model.lora !== null && config.model.from === null) {
      ctx.addIssue({ code: 'custom', path: ['model', 'lora'], message: 'needs model.from (LoRA adapts a pretrained model; a model trained from scratch trains in full)' });
    }
    if (config.context.actions === 'listed' && !config.sampling.constrained) {
      ctx.addIssue({ code: 'custom', path: ['context', 'actions'], message: "'listed' decodes over the listed actions, but sampling.constrained is false; set one of them to match" });
    }
    if (config.context.format === 'chat' && config.model.from === null) {
      ctx.addIssue({ code: 'custom', path: ['context', 'format'], message: "'chat' needs model.from (turnwise's own model has no chat template)" });
    }
    if (config.sampling.maxActionTokens >= config.model.maxContext) {
      ctx.addIssue({
        code: 'custom',
        path: ['sampling', 'maxActionTokens'],
        message: `must be below model.maxContext (${config.model.maxContext}), got ${config.sampling.maxActionTokens}`,
      });
    }
    if (config.algorithm.name === 'ppo' && config.algorithm.critic.dModel % config.algorithm.critic.nHeads !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['algorithm', 'critic', 'nHeads'],
        message: `must divide algorithm.critic.dModel (${config.algorithm.critic.dModel}), got ${config.algorithm.critic.nHeads}`,
      });
    }
    if (config.reward.mode === 'outcome+shaped' && config.reward.shaper === null) {
      ctx.addIssue({ code: 'custom', path: ['reward', 'shaper'], message: "mode 'outcome+shaped' needs a shaper (e.g. invalid-action-penalty)" });
    }
    if (config.reward.mode !== 'outcome+shaped' && config.reward.shaper !== null) {
      ctx.addIssue({
        code: 'custom',
        path: ['reward', 'mode'],
        message: `a shaper (${config.reward.shaper}) is set but mode '${config.reward.mode}' never trains on shaped rewards; use 'outcome+shaped' or remove reward.shaper`,
      });
    }
    for (const issue of engineIssues(config)) ctx.addIssue({ code: 'custom', ...issue });
    const episodesPerStep = config.algorithm.tasksPerStep * config.algorithm.groupSize;
    if (episodesPerStep % config.algorithm.miniBatches !== 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['algorithm', 'miniBatches'],
        message: `must divide the episodes per step (tasksPerStep x groupSize = ${episodesPerStep}), got ${config.algorithm.miniBatches}`,
      });
    }
  });

/** A parsed config with every default filled in. */
export type TurnwiseConfig = Omit<z.output<typeof configSchema>, 'algorithm'> & { algorithm: AlgorithmConfig | CustomAlgorithmConfig };

/** What a YAML file or caller may write: every field optional except inside a chosen horizon schedule. */
export type TurnwiseConfigInput = z.input<typeof configSchema>;

/** The horizon section, one of its schedules. */
export type HorizonConfig = TurnwiseConfig['horizon'];

/** One environment's schedule (every kind except `per-env`). */
export type SingleHorizonConfig = z.output<typeof singleHorizonSchema>;
