/**
 * The exact prompt token ids the policy sees at one turn (token-in, token-out: past actions are the
 * ids that were sampled, never re-tokenized text).
 *
 * Layout, `[tokens]`:
 *
 *     <|bos|> [<|system|> instruction]            ← instruction only if policy.includeInstruction
 *     ( <|obs|> observation_t <|act|> action_t )* ← kept past turns, oldest first; action_t are the
 *                                                   stored ids, normally ending with <|end|>
 *     <|obs|> observation_now <|act|>             ← the model generates after this
 *
 * Kept past turns: all (`history: 'full'`), or the last k (`history: k`, 0 = none).
 *
 * Truncation, when the layout exceeds `maxContextTokens`:
 * 1. drop whole past turns, oldest first (a half turn would show an action without its cause);
 * 2. if still too long, cut the FRONT of the current observation, keeping its end (where the
 *    available actions are listed, right before `<|act|>`);
 * 3. `<|bos|>`, the system segment and the final `<|obs|>` … `<|act|>` markers are never cut: if they
 *    alone exceed the budget, `InvalidArgumentError('policy.maxContextTokens')` is thrown.
 */
import { InvalidArgumentError } from '../core/errors.js';
import type { Tokenizer } from './tokenizer/contract.js';

/** How much of the episode goes into the prompt. */
export interface ContextPolicy {
  /** Past turns kept: `'full'` for all, or the last k (0 = none). */
  readonly history: 'full' | number;
  /** Whether the `<|system|>` instruction segment is included. */
  readonly includeInstruction: boolean;
  /** Hard cap on the context length in tokens (truncation rule in the module comment). */
  readonly maxContextTokens: number;
}

/** One completed turn of the episode. */
export interface PastTurn {
  /** The observation the agent acted on. */
  readonly observationText: string;
  /** [tokens] the sampled action ids, used verbatim (normally ending with `<|end|>`). */
  readonly actionTokens: Int32Array;
}

/** What the context of the current turn is built from. */
export interface ContextInput {
  /** The environment's instruction (goal / rules). */
  readonly instruction: string;
  /** Completed turns, oldest first. */
  readonly pastTurns: readonly PastTurn[];
  /** The observation the agent must act on now. */
  readonly observationText: string;
}

/**
 * Builds the context ids of the current turn (layout and truncation rule in the module comment).
 * @example
 * const ids = buildContext(tok, { instruction: 'Your goal: go to the red ball', pastTurns: [], observationText: obs },
 *   { history: 0, includeInstruction: true, maxContextTokens: 256 });
 * // [bos, system, ...instruction, obs, ...observation, act]
 */
export function buildContext(tokenizer: Tokenizer, input: ContextInput, policy: ContextPolicy): Int32Array {
  const { history, includeInstruction, maxContextTokens } = policy;
  if (history !== 'full' && !(Number.isInteger(history) && history >= 0)) {
    throw InvalidArgumentError.format('policy.history', `expected 'full' or an integer ≥ 0, got ${String(history)}`);
  }
  if (!(Number.isInteger(maxContextTokens) && maxContextTokens > 0)) {
    throw InvalidArgumentError.format('policy.maxContextTokens', `expected a positive integer, got ${maxContextTokens}`);
  }
  const bos = tokenizer.specialId('bos');
  const system = tokenizer.specialId('system');
  const obs = tokenizer.specialId('observation');
  const act = tokenizer.specialId('action');

  const instruction = includeInstruction ? tokenizer.encode(input.instruction) : undefined;
  const head = 1 + (instruction === undefined ? 0 : 1 + instruction.length);
  const firstKept = history === 'full' ? 0 : Math.max(0, input.pastTurns.length - history);
  const past = input.pastTurns.slice(firstKept).map((turn) => ({ observation: tokenizer.encode(turn.observationText), action: turn.actionTokens }));
  let current = tokenizer.encode(input.observationText);

  const turnLength = (t: { observation: Int32Array; action: Int32Array }): number => 2 + t.observation.length + t.action.length;
  let pastLength = past.reduce((sum, t) => sum + turnLength(t), 0);
  let dropped = 0;
  while (dropped < past.length && head + pastLength + 2 + current.length > maxContextTokens) {
    pastLength -= turnLength(past[dropped]);
    dropped++;
  }
  const room = maxContextTokens - head - 2; // tokens left for the current observation
  if (room < 0) {
    throw InvalidArgumentError.format('policy.maxContextTokens', `${maxContextTokens} cannot hold <|bos|>, the instruction (${head - 1} tokens with <|system|>) and <|obs|><|act|>`);
  }
  if (current.length > room) current = current.subarray(current.length - room);

  const out = new Int32Array(head + pastLength + 2 + current.length);
  let at = 0;
  const put = (ids: ArrayLike<number>): void => {
    for (let i = 0; i < ids.length; i++) out[at++] = ids[i];
  };
  out[at++] = bos;
  if (instruction !== undefined) {
    out[at++] = system;
    put(instruction);
  }
  for (const turn of past.slice(dropped)) {
    out[at++] = obs;
    put(turn.observation);
    out[at++] = act;
    put(turn.action);
  }
  out[at++] = obs;
  put(current);
  out[at++] = act;
  return out;
}

// Per tokenizer: action text → ids + <|end|>. Bounded by clearing (action sets are small and repeat).
const actionCache = new WeakMap<Tokenizer, Map<string, Int32Array>>();
const ACTION_CACHE_SIZE = 8192;

/**
 * Each action's ids followed by `<|end|>`: the sequences constrained decoding chooses among, and the
 * ids stored as the turn's action. Cached per tokenizer; every call returns fresh arrays.
 * @example
 * encodeActionChoices(tok, ['turn left', 'go to red ball 1']);
 * // [Int32Array [...ids('turn left'), end], Int32Array [...ids('go to red ball 1'), end]]
 */
export function encodeActionChoices(tokenizer: Tokenizer, actions: readonly string[]): Int32Array[] {
  let cache = actionCache.get(tokenizer);
  if (cache === undefined) {
    cache = new Map();
    actionCache.set(tokenizer, cache);
  }
  const end = tokenizer.specialId('end');
  return actions.map((action) => {
    let ids = cache.get(action);
    if (ids === undefined) {
      const text = tokenizer.encode(action);
      ids = new Int32Array(text.length + 1);
      ids.set(text);
      ids[text.length] = end;
      if (cache.size >= ACTION_CACHE_SIZE) cache.clear();
      cache.set(action, ids);
    }
    return ids.slice();
  });
}
