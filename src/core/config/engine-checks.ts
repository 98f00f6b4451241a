/**
 * What a remote model engine (`model.engine: tinker`) cannot do, refused when the config is parsed
 * with the field at fault named — never discovered mid-run. A Tinker server trains LoRA adapters
 * with a per-token loss it computes itself (`importance_sampling`, `ppo`, …) and samples from the
 * raw model: so no critic, no loss term other than the clipped surrogate, the KL to the base only as
 * a reward penalty (turnwise computes it from the base's log-probs), no constrained decoding, and
 * sampling at temperature 1 (the engine's log-probs are of the untempered model).
 */

/** The fields of a parsed config these checks read. */
export interface EngineCheckedConfig {
  readonly model: { readonly engine: 'local' | 'tinker'; readonly from: string | null; readonly lora: unknown; readonly tinker: unknown };
  readonly algorithm: {
    readonly name: string;
    readonly klCoef?: number;
    readonly klPlacement?: string;
    readonly entropyCoef?: number;
    readonly dualClip?: number | null;
    readonly policyLoss?: string;
    readonly gradClip?: number | null;
  };
  readonly sampling: { readonly temperature: number; readonly constrained: boolean };
  readonly context: { readonly format: string };
  readonly offPolicy: { readonly correction: string };
  readonly train: { readonly dataParallel: number | 'auto' };
}

/** One refusal: the config path at fault and why. */
export interface EngineIssue {
  readonly path: (string | number)[];
  readonly message: string;
}

/**
 * The refusals of `config` under its engine (none for the local engine).
 * @example engineIssues(config) // [{ path: ['algorithm', 'entropyCoef'], message: '...' }]
 */
export function engineIssues(config: EngineCheckedConfig): EngineIssue[] {
  if (config.model.engine !== 'tinker') {
    return config.model.tinker === null ? [] : [{ path: ['model', 'tinker'], message: "is set but model.engine is 'local'; set model.engine: tinker to use it, or remove it" }];
  }
  const issues: EngineIssue[] = [];
  const refuse = (path: (string | number)[], message: string): void => {
    issues.push({ path, message });
  };
  const a = config.algorithm;
  if (config.model.tinker === null) refuse(['model', 'tinker'], 'is required with model.engine: tinker (at least { url })');
  if (config.model.from === null) refuse(['model', 'from'], "is required with model.engine: tinker: a local folder with the model's tokenizer.json, tokenizer_config.json (chat template) and config.json (weights not needed)");
  if (config.model.lora === null) refuse(['model', 'lora'], 'is required with model.engine: tinker (Tinker servers train LoRA adapters; model.lora.rank is sent)');
  if (a.name === 'ppo') refuse(['algorithm', 'name'], "'ppo' trains a critic, which a Tinker engine cannot hold; use grpo, rloo, reinforce_pp or reinforce");
  if ((a.klCoef ?? 0) > 0 && a.klPlacement !== 'reward') {
    refuse(['algorithm', 'klPlacement'], "must be 'reward' with model.engine: tinker and klCoef > 0: the engine's loss has no KL term, so turnwise folds the KL to the base into the reward");
  }
  if ((a.entropyCoef ?? 0) > 0) refuse(['algorithm', 'entropyCoef'], 'must be 0 with model.engine: tinker (the engine computes only the clipped surrogate loss)');
  if (a.dualClip !== undefined && a.dualClip !== null) refuse(['algorithm', 'dualClip'], 'must be null with model.engine: tinker (the engine\'s ppo loss has no dual clip)');
  if (a.policyLoss !== undefined && a.policyLoss !== 'ppo-clip') {
    refuse(['algorithm', 'policyLoss'], `'${a.policyLoss}' runs in turnwise's learner; with model.engine: tinker the loss runs on the server: use ppo-clip`);
  }
  if (config.offPolicy.correction !== 'none') refuse(['offPolicy', 'correction'], `'${config.offPolicy.correction}' is not offered by Tinker engines; use 'none' (the ppo loss clips the ratio to the behaviour log-probs)`);
  if (config.sampling.constrained) refuse(['sampling', 'constrained'], 'must be false with model.engine: tinker (a Tinker server samples free text; the environment parses the reply)');
  if (config.sampling.temperature !== 1) {
    refuse(['sampling', 'temperature'], `must be 1 with model.engine: tinker, got ${config.sampling.temperature}: the engine's log-probs are of the untempered model, so the loss's ratio would not be against the sampling distribution`);
  }
  if (config.context.format === 'turnwise') refuse(['context', 'format'], "must be 'chat' or 'auto' with model.engine: tinker (the model talks through its chat template)");
  const server = (config.model.tinker as { server?: string } | null)?.server;
  if (server === 'skyrl' && a.gradClip !== undefined && a.gradClip !== null) {
    refuse(['algorithm', 'gradClip'], `must be null with model.tinker.server: skyrl, got ${a.gradClip}: SkyRL tx's optim_step does not clip gradients, so a clip would silently not happen`);
  }
  if (config.train.dataParallel !== 'auto' && config.train.dataParallel > 1) refuse(['train', 'dataParallel'], 'must be 1 with model.engine: tinker (the engine parallelises on its own hardware)');
  return issues;
}
