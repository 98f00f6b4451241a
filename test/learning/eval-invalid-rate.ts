/** Invalid-action rate of a run's held-out evaluation, read back from its run store. */
import { RunStore } from '../../src/store/run-store.js';

/** Share of the turns of held-out episodes at `step` that the environment flagged invalid. */
export function evalInvalidRate(runDir: string, step: number): number {
  const store = RunStore.open(runDir, { readonly: true });
  try {
    let turns = 0;
    let invalid = 0;
    for (const episode of store.episodes({ split: 'test', step })) {
      for (const turn of store.episodeTurns(episode.id)) {
        turns++;
        if (turn.invalidAction) invalid++;
      }
    }
    return invalid / Math.max(1, turns);
  } finally {
    store.close();
  }
}
