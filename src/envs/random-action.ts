/**
 * What a uniformly random agent sends to an environment whose actions are not listed (a free mode:
 * any Wordle word, any SQL query, any search): one valid-looking action drawn from what the
 * observation shows (words of a vocabulary, names in the schema or the documents), so that a
 * random baseline measures luck, not parse errors. `turnwise simulate --policy random` uses it
 * whenever an observation lists no actions; with listed actions it picks uniformly among them.
 */
import type { Rng } from '../core/rng.js';
import type { Observation } from '../core/types.js';

/** How the action is written: plain text (`Action: crane`, `<search>…</search>`) or a tool call's canonical text. */
export type ActionForm = 'text' | 'tools';

/** What a random action is drawn from. */
export interface RandomActionRequest {
  /** The observation the action answers (its text is all an agent sees). */
  readonly observation: Observation;
  /** The first observation of the episode (the question, the goal, the recipes). */
  readonly first: Observation;
  readonly rng: Rng;
  readonly form: ActionForm;
}

/** Draws one random valid-looking action (pure in `rng`). */
export type RandomActionSource = (request: RandomActionRequest) => string;

/**
 * The words of `text` (letters and digits, at least `minLength` long), in order, duplicates kept.
 * @example wordsOf('What is the capital of France?', 4) // ['What', 'capital', 'France']
 */
export function wordsOf(text: string, minLength = 1): string[] {
  return (text.match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length >= minLength);
}
