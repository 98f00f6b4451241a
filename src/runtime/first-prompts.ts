/**
 * The first prompts of a chat run, measured before anything large is loaded: the environment's
 * instruction and first observation of a sample of tasks, laid out by the model's chat template.
 * Two uses: a config whose context cannot hold a first prompt and a reply is refused, naming the
 * tokens it needs (a 512-token context left 13 of 64 GoToRedBall evaluation episodes no room for
 * a reply at turn 0, and a Qwen run at 240 ended every episode there); and the memory estimate
 * sizes a step's training sequences from them.
 */
import { InvalidConfigError } from '../core/errors.js';
import type { ResolvedConfig } from '../core/config.js';
import type { EnvironmentSpec } from '../envs/environment.js';
import type { PolicyText } from '../models/policy-text.js';

/** Tasks of each split whose first prompt is measured (spread evenly over the split). */
export const PROBED_TASKS = 32;

/** What the probe found. */
export interface FirstPrompts {
  /** Tokens of the shortest and the longest first prompt (chat scaffolding and generation prompt included). */
  readonly shortest: number;
  readonly longest: number;
  /** Task id of the longest. */
  readonly longestTask: string;
  /** Every measured length, in task order. */
  readonly lengths: readonly number[];
}

/** Up to `count` indices spread evenly over `all` (all of them when fewer). */
function spread(all: readonly number[], count: number): number[] {
  if (all.length <= count) return [...all];
  return Array.from({ length: count }, (_, k) => all[Math.floor((k * all.length) / count)] as number);
}

/**
 * Measures the first prompts of {@link PROBED_TASKS} tasks of the train and test splits, or null
 * for an environment behind a server (`agentgym`: a probe would take instances from it).
 * @example const prompts = await probeFirstPrompts(config, getEnvironmentSpec('babyai'), text);
 */
export async function probeFirstPrompts(config: ResolvedConfig, spec: EnvironmentSpec, text: PolicyText): Promise<FirstPrompts | null> {
  if (spec.name === 'agentgym') return null;
  const options = { settings: config.env.settings as Record<string, unknown> };
  const catalog = spec.catalog(options);
  const env = spec.create(options);
  try {
    const instruction = env.instruction();
    const tasks = [...new Set([...spread(catalog.indices(config.env.trainSplit as never), PROBED_TASKS), ...spread(catalog.indices(config.env.testSplit as never), PROBED_TASKS)])];
    const lengths: number[] = [];
    let longestTask = '';
    let longest = 0;
    for (const task of tasks) {
      const observation = await env.reset(task);
      const length = text.context({ instruction, pastTurns: [], observationText: observation.text }).length;
      lengths.push(length);
      if (length > longest) {
        longest = length;
        longestTask = `${spec.name}_${task}`;
      }
    }
    if (lengths.length === 0) return null;
    return { shortest: Math.min(...lengths), longest, longestTask, lengths };
  } finally {
    await env.close();
  }
}

/**
 * Refuses a context that cannot hold the longest measured first prompt and a reply of
 * `sampling.maxActionTokens`, naming the tokens needed.
 * @throws InvalidConfigError at `model.maxContext`.
 * @example checkFirstPromptsFit(config, prompts, 512)
 */
export function checkFirstPromptsFit(config: ResolvedConfig, prompts: FirstPrompts, maxContext: number, modelLimit: number): void {
  const reply = config.sampling.maxActionTokens;
  const needed = prompts.longest + reply;
  if (needed <= maxContext) return;
  const short = prompts.lengths.filter((l) => l + reply > maxContext).length;
  const raise = needed <= modelLimit ? `raise model.maxContext to at least ${needed}` : `the model's own limit is ${modelLimit} tokens: shorten the prompt`;
  throw new InvalidConfigError(
    'model.maxContext',
    `${maxContext} tokens cannot hold the first prompt and a reply: ${prompts.longestTask}'s first prompt is ${prompts.longest} tokens (instruction, first observation and chat template) + sampling.maxActionTokens ${reply} = ${needed}; ${short} of ${prompts.lengths.length} sampled tasks would end by length at turn 0: ${raise} (or lower sampling.maxActionTokens)`,
  );
}
