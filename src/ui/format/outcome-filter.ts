/**
 * What the trajectory viewer's outcome filter offers: the outcomes the chosen step's episodes
 * actually ended with, with counts, and, when the chosen outcome has none, a sentence saying why
 * the list is empty (BabyAI, for one, ends episodes as success or truncated, never failure). Pure.
 */

/** Every outcome a stored episode can have, in display order. */
export const OUTCOMES = ['success', 'failure', 'truncated', 'length', 'error'] as const;

/** What each outcome means, for the empty-list explanation. */
const MEANING: Readonly<Record<string, string>> = {
  success: 'the task was solved',
  failure: 'the environment ended the episode as failed (environments that cannot fail, such as BabyAI, never report it)',
  truncated: 'the horizon ran out before the task was solved',
  length: 'the context length ran out',
  error: 'the environment or the policy raised an error',
};

/** One option of the filter: value '' is "any". */
export interface OutcomeOption {
  readonly value: string;
  readonly label: string;
  readonly count: number;
}

/** Episode counts of one step by outcome (`{ total, success, truncated, ... }` from `episode-steps`). */
export type OutcomeCounts = Readonly<Record<string, number>>;

const countOf = (counts: OutcomeCounts, outcome: string) => counts[outcome] ?? 0;

/**
 * "any" plus each outcome present in `counts`; the `chosen` outcome is kept (with count 0) when
 * absent, so the select still shows what the URL asked for.
 * @example outcomeOptions({ total: 12, success: 1, truncated: 11 }, '').map((o) => o.label) // ['any (12)', 'success (1)', 'truncated (11)']
 */
export function outcomeOptions(counts: OutcomeCounts, chosen: string): OutcomeOption[] {
  const present = OUTCOMES.filter((o) => countOf(counts, o) > 0 || o === chosen);
  return [{ value: '', label: `any (${counts.total ?? 0})`, count: counts.total ?? 0 }, ...present.map((o) => ({ value: o, label: `${o} (${countOf(counts, o)})`, count: countOf(counts, o) }))];
}

/**
 * Why the list is empty for `outcome`, or null when it is not.
 * @example emptyOutcomeReason('failure', { total: 12, success: 1, truncated: 11 }, 'test', 3)
 * // 'No failure episodes at step 3 (test split): its 12 episodes ended success (1), truncated (11). failure means ...'
 */
export function emptyOutcomeReason(outcome: string, counts: OutcomeCounts, split: string, step: number | string): string | null {
  if (outcome === '' || countOf(counts, outcome) > 0) return null;
  const total = counts.total ?? 0;
  if (total === 0) return `No ${split} episodes at step ${step}.`;
  const endings = OUTCOMES.filter((o) => countOf(counts, o) > 0).map((o) => `${o} (${countOf(counts, o)})`);
  return `No ${outcome} episodes at step ${step} (${split} split): its ${total} episode${total === 1 ? '' : 's'} ended ${endings.join(', ')}. “${outcome}” means ${MEANING[outcome] ?? 'an outcome this run did not record'}.`;
}
