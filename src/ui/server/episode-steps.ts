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
