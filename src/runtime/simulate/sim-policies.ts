/**
 * Text policies for `turnwise simulate`: `scripted` (BabyAI: the memoryless oracle of
 * `src/envs/babyai/oracle.ts`; other environments: a fixed rule over the listed actions) and
 * `random` (a seeded uniform choice among the listed actions). Both are stateless — everything
 * they need is in the request (the first observation, the past actions, the per-turn seed) — so
 * a live episode costs no policy state.
 */
import { Rng } from '../../core/rng.js';
import { extractGoal, targetAction } from '../../envs/babyai/oracle.js';
import type { ActionForm, RandomActionSource } from '../../envs/random-action.js';
import type { TextActRequest, TextActResult, TextPolicy } from '../../policies/text-policy.js';

const NO_USAGE = { promptTokens: 0, completionTokens: 0 } as const;
/** Sent when the environment lists no actions: the environment answers it as unparsable. */
const FALLBACK_ACTION = 'look';

function reply(text: string): Promise<TextActResult> {
  return Promise.resolve({ text, usage: NO_USAGE });
}

/**
 * The BabyAI oracle without state: it searches by turning left up to three times, then steps
 * forward; the search count is the number of trailing `turn left` actions modulo 4 (the oracle
 * resets its count after the fourth search move).
 * @example babyaiScriptedAction({ turns: [], observation }) // 'go to red ball 1' when it is listed
 */
export function babyaiScriptedAction(request: Pick<TextActRequest, 'turns' | 'observation'>): string {
  const first = request.turns[0]?.observationText ?? request.observation.text;
  const goal = extractGoal(first);
  const actions = request.observation.availableActions ?? [];
  const target = goal === null ? null : targetAction(actions, goal);
  if (target !== null) return target;
  let trailing = 0;
  for (let i = request.turns.length - 1; i >= 0 && request.turns[i]?.actionText === 'turn left'; i--) trailing++;
  if (trailing % 4 < 3) return 'turn left';
  return actions.includes('move forward') ? 'move forward' : 'turn left';
}

/**
 * The scripted policy of an environment.
 * @example const policy = scriptedPolicy('babyai');
 */
export function scriptedPolicy(envName: string): TextPolicy {
  if (envName === 'babyai') return { act: (request) => reply(babyaiScriptedAction(request)) };
  // A fixed rule: cycle through the listed actions by turn number.
  return {
    act: (request) => {
      const actions = request.observation.availableActions ?? [];
      return reply(actions.length === 0 ? FALLBACK_ACTION : (actions[request.turns.length % actions.length] as string));
    },
  };
}

/**
 * Uniform over the listed actions, drawn from the episode's per-turn seed (the same seed whether
 * environments run in-process or in workers, so trajectories are reproducible); where none are
 * listed, the environment's random valid-looking action (see `randomFlowPolicy`).
 * @example const policy = randomPolicy();
 */
export function randomPolicy(randomAction?: RandomActionSource, form: ActionForm = 'text'): TextPolicy {
  return {
    act: (request) => {
      const actions = request.observation.availableActions ?? [];
      if (actions.length > 0) return reply(actions[request.seed % actions.length] as string);
      if (randomAction === undefined) return reply(FALLBACK_ACTION);
      const firstText = request.turns[0]?.observationText;
      const first = firstText === undefined ? request.observation : { text: firstText };
      return reply(randomAction({ observation: request.observation, first, rng: Rng.fromSeed(request.seed), form }));
    },
  };
}
