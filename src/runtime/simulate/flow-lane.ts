/**
 * One lane of the `FlowDriver`: a slot that plays episodes back to back, one at a time. It holds
 * the running episode (its machine's snapshot, or a live actor) and plan, the environment instance it talks to, and the ticket of the request
 * it waits on (answers with an older ticket are stale and dropped).
 */
import type { FlowResult } from '../../actors/episode-flow.js';
import type { FlowEpisode } from '../../actors/episode-flow-steps.js';
import type { Observation } from '../../core/types.js';
import type { EpisodePlan } from '../rollout.js';
import type { FlowTurn } from './flow-policies.js';

/** A lane and the episode it plays. */
export interface Lane extends FlowTurn {
  readonly lane: number;
  observation: Observation;
  turnCount: number;
  seed: number;
  envSlot: number;
  /** The episode playing on this lane, or null between episodes. */
  episode: FlowEpisode | null;
  plan: EpisodePlan | null;
  planIndex: number;
  /** The action sent with the pending step. */
  action: string;
  /** Id of the request the lane waits on; answers with another id are stale. */
  ticket: number;
  result: FlowResult | null;
}

const EMPTY: Observation = { text: '' };

/**
 * An idle lane, talking to environment slot `lane` until an error moves it to a fresh one.
 * @example
 * const lanes = Array.from({ length: 64 }, (_, i) => createLane(i));
 */
export function createLane(lane: number): Lane {
  return {
    lane,
    observation: EMPTY,
    turnCount: 0,
    seed: 0,
    envSlot: lane,
    episode: null,
    plan: null,
    planIndex: -1,
    action: '',
    ticket: 0,
    result: null,
  };
}

/**
 * Points `lane` at episode `index` of the run (its plan), clearing what the last episode left.
 * The caller then starts the episode.
 * @example
 * assignEpisode(lane, plan, 7); // lane.planIndex = 7, lane.turnCount = 0
 */
export function assignEpisode(lane: Lane, plan: EpisodePlan, index: number): void {
  lane.plan = plan;
  lane.planIndex = index;
  lane.seed = plan.seed;
  lane.turnCount = 0;
  lane.observation = EMPTY;
  lane.result = null;
}
