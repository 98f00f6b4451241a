/**
 * Two ways to run the flow episode machine (`episode-flow.ts`) — the same machine, events and
 * actions either way (issue #20 part 4):
 *
 * - `snapshots` (the default of the flow driver): each episode is only its xstate snapshot, stepped
 *   by the machine's own pure transition function (`machine.getInitialSnapshot(scope, input)`,
 *   `machine.transition(snapshot, event, scope)`) with ONE actor scope shared by every episode of a
 *   driver, whose action executor runs the returned actions at once, in order — what a running
 *   actor does with them. No actor object, mailbox, system or observer per episode.
 * - `actors`: one live xstate actor per episode (`createActor(...).start()`, `actor.send`), kept for
 *   comparison in the bench.
 *
 * Why not xstate's exported `transition()` / `initialTransition()`: each call builds a fresh inert
 * actor (and with it the machine's initial context) to get a scope. Measured on this machine with
 * 10,000 episodes: live actors ~35–45 µs to create and start and 12–17 µs per event; exported
 * `transition()` 90–140 µs to start and 55–75 µs per event; the shared scope 6–10 µs and 5–6 µs.
 * Pooled actors are no option either: an xstate actor cannot start again once it reached a final
 * state.
 */
import { type AnyActorScope, createActor, type Snapshot } from 'xstate';
import { type FlowEvent, type FlowHost, type FlowInput, episodeFlowMachine } from './episode-flow.js';

/** One running flow episode, whichever way it runs. */
export interface FlowEpisode {
  /** Delivers one event (ignored once the episode ended); the machine's actions run before this returns. */
  send(event: FlowEvent): void;
  /** `active` until the episode reached its final state. */
  readonly status: Snapshot<unknown>['status'];
}

/** Starts flow episodes (the entry action — the reset request — runs before `start` returns). */
export type FlowEpisodeStarter = (input: FlowInput) => FlowEpisode;

/** How episodes run: pure steps on snapshots, or one live actor each. */
export type FlowEpisodeMode = 'snapshots' | 'actors';

const IDLE_HOST: FlowHost = { requestReset() {}, requestTurn() {}, finished() {} };

/**
 * Episodes as snapshots stepped through the machine's transition function with one shared scope.
 * @example const start = snapshotEpisodes(); const episode = start(input); episode.send({ type: 'RESET_RESULT', observationText });
 */
export function snapshotEpisodes(): FlowEpisodeStarter {
  // The scope's `self`: an actor never started, there only because xstate's scope names one.
  const self = createActor(episodeFlowMachine, { input: { host: IDLE_HOST, slot: -1, taskId: '', groupId: '', trajectoryId: '', step: 0, horizon: 0 } });
  const scope: AnyActorScope = {
    self,
    id: 'episode-flow',
    sessionId: self.sessionId,
    logger: () => {},
    defer: () => {},
    emit: () => {},
    system: self.system,
    stopChild: () => {},
    // Run each action as it is resolved, as a running actor does (the machine's actions are plain functions).
    actionExecutor: (action) => action.exec?.(action.info, action.params),
  };
  return (input) => {
    let snapshot = episodeFlowMachine.getInitialSnapshot(scope, input);
    return {
      send(event) {
        // A stopped actor drops events; the transition function alone would not (a root-level
        // FAILED would leave a final state), so the check a live actor makes is made here.
        if (snapshot.status !== 'active') return;
        snapshot = episodeFlowMachine.transition(snapshot, event, scope);
      },
      get status() {
        return snapshot.status;
      },
    };
  };
}

/**
 * Episodes as live actors (the comparison arm).
 * @example const start = actorEpisodes(); const episode = start(input);
 */
export function actorEpisodes(): FlowEpisodeStarter {
  return (input) => {
    const actor = createActor(episodeFlowMachine, { input }).start();
    return {
      send: (event) => actor.send(event),
      get status() {
        return actor.getSnapshot().status;
      },
    };
  };
}

/**
 * The starter for a mode.
 * @example const start = flowEpisodes('snapshots');
 */
export function flowEpisodes(mode: FlowEpisodeMode): FlowEpisodeStarter {
  return mode === 'actors' ? actorEpisodes() : snapshotEpisodes();
}
