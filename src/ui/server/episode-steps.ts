/**
 * The dashboard numbers episodes by the step of the curves, so the episodes behind a point of a
 * curve are found at that point's step. The run store keeps a training episode at the index of
 * the rollout that played it (0-based, the `s<step>` of its id), while a step's metrics are logged
 * at the number of steps completed (1-based): the episodes of rollout s make the point at s + 1.
 * Held-out (test) episodes and `turnwise eval` episodes are stored at the completed steps they
 * evaluate, as their metrics are, so their step is the same in both.
 */
import type { EpisodeFilter, EpisodeRecord, EpisodeSplit, RunStore } from '../../store/run-store.js';

const SPLITS: readonly EpisodeSplit[] = ['train', 'test', 'eval'];

/**
 * The curves' step of a stored episode.
 * @example curveStepOf({ split: 'train', step: 0 }) // 1
 */
export function curveStepOf(episode: Pick<EpisodeRecord, 'split' | 'step'>): number {
  return episode.split === 'train' ? episode.step + 1 : episode.step;
}

/**
 * The stored step of `split`'s episodes shown at curve step `step`; null when none can be there
 * (training episodes at step 0, before any training).
 * @example storedStepOf('train', 1) // 0
 */
export function storedStepOf(split: EpisodeSplit, step: number): number | null {
  if (split !== 'train') return step;
  return step >= 1 ? step - 1 : null;
}

/** An episode as the API shows it: `step` is the curves' step. */
export function episodeJson(episode: EpisodeRecord): EpisodeRecord {
  return { ...episode, step: curveStepOf(episode) };
}

/**
 * Episodes matching `filter`, whose `step` (when given) is a curve step; the result's steps are
 * curve steps too. Ordered by step, then id; `limit` and `offset` apply to that order.
 * @example episodesAtCurveStep(store, { step: 10, split: 'train', limit: 200 }) // rollout 9's episodes
 */
export function episodesAtCurveStep(store: RunStore, filter: EpisodeFilter): EpisodeRecord[] {
  const { step, split, limit = 1000, offset = 0 } = filter;
  if (step === undefined) return store.episodes(filter).map(episodeJson);
  const parts = (split === undefined ? SPLITS : [split]).flatMap((s) => {
    const stored = storedStepOf(s, step);
    return stored === null ? [] : store.episodes({ ...filter, split: s, step: stored, limit: offset + limit, offset: 0 });
  });
  return parts
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .slice(offset, offset + limit)
    .map(episodeJson);
}

/** Episode counts at one curve step: `total` plus one count per outcome that occurs. */
export type StepCounts = { step: number; total: number } & Record<string, number>;

/** One page of {@link episodeStepPage}: `next` is the `from` of the following page, null at the end. */
export interface EpisodeStepPage {
  readonly steps: StepCounts[];
  readonly next: number | null;
}

/**
 * Most episodes one split's counting reads for a page: a page ends at the first step boundary past
 * it (or at `limit` steps), so a request's work is bounded whatever the run's size.
 */
export const EPISODES_PER_PAGE = 5000;

/**
 * `split`'s curve steps from `from` up with their counts, until `want` steps or
 * {@link EPISODES_PER_PAGE} episodes; `stopAt` is the step it stopped before (null: the run's
 * end). Rows come in stored-step order, so every step before `stopAt` is complete.
 */
function splitStepCounts(store: RunStore, split: EpisodeSplit, from: number, want: number): { steps: Map<number, StepCounts>; stopAt: number | null } {
  const steps = new Map<number, StepCounts>();
  let counted = 0;
  for (const row of store.episodeCounts(split, storedStepOf(split, from) ?? 0)) {
    const step = curveStepOf({ split, step: row.step });
    if (step < from) continue;
    let counts = steps.get(step);
    if (counts === undefined) {
      if (steps.size >= want || counted >= EPISODES_PER_PAGE) return { steps, stopAt: step };
      counts = { step, total: 0 } as StepCounts;
      steps.set(step, counts);
    }
    counts.total += row.count;
    counts[row.outcome] = (counts[row.outcome] ?? 0) + row.count;
    counted += row.count;
  }
  return { steps, stopAt: null };
}

/**
 * Curve steps that have episodes (of `split`, or of any split), from curve step `from` up, at most
 * `limit` of them, with outcome counts. Each split's counts come through an index and stop after
 * `limit` steps or about {@link EPISODES_PER_PAGE} episodes, never reading the whole run; `next`
 * (the following page's `from`) is then the first step not listed.
 * @example episodeStepPage(store, { split: 'train', from: 0, limit: 2 }) // { steps: [{ step: 1, total: 8, success: 3, failure: 5 }, …], next: 3 }
 */
export function episodeStepPage(store: RunStore, query: { split?: EpisodeSplit; from: number; limit: number }): EpisodeStepPage {
  const merged = new Map<number, StepCounts>();
  // Steps at or past the first split's stop are not complete for that split: they wait for `next`.
  let cut = Number.POSITIVE_INFINITY;
  for (const split of query.split === undefined ? SPLITS : [query.split]) {
    const { steps, stopAt } = splitStepCounts(store, split, query.from, query.limit);
    if (stopAt !== null) cut = Math.min(cut, stopAt);
    for (const [step, counts] of steps) {
      const into = merged.get(step);
      if (into === undefined) {
        merged.set(step, counts);
        continue;
      }
      for (const [key, n] of Object.entries(counts)) if (key !== 'step') into[key] = (into[key] ?? 0) + n;
    }
  }
  const complete = [...merged.values()].filter((c) => c.step < cut).sort((a, b) => a.step - b.step);
  const next = complete[query.limit]?.step ?? (Number.isFinite(cut) ? cut : null);
  return { steps: complete.slice(0, query.limit), next };
}
