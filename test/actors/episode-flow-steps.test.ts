import { describe, expect, it } from 'vitest';
import type { FlowEvent, FlowHost, FlowResult } from '../../src/actors/episode-flow.js';
import { actorEpisodes, type FlowEpisodeStarter, snapshotEpisodes } from '../../src/actors/episode-flow-steps.js';

// The flow episode machine run as snapshots through its own transition function (issue #20 part 4)
// behaves exactly as the same machine in a live actor: the same host calls, in the same order,
// and the same final result, for every kind of ending.

type Call = [string, number, FlowResult?];

function recordingHost(calls: Call[]): FlowHost {
  return {
    requestReset: (slot) => calls.push(['reset', slot]),
    requestTurn: (slot) => calls.push(['turn', slot]),
    finished: (slot, result) => calls.push(['finished', slot, result]),
  };
}

const turn = (i: number, done = false, reward = 0, success?: boolean): FlowEvent => ({
  type: 'TURN_RESULT',
  actionText: `action ${i}`,
  observationText: `observation ${i + 1}`,
  reward,
  done,
  ...(success !== undefined ? { success } : {}),
  invalidAction: i === 1,
});

const scripts: Record<string, { horizon: number; events: FlowEvent[] }> = {
  success: { horizon: 5, events: [{ type: 'RESET_RESULT', observationText: 'observation 0' }, turn(0), turn(1, true, 1)] },
  failure: { horizon: 5, events: [{ type: 'RESET_RESULT', observationText: 'observation 0' }, turn(0, true, 0, false)] },
  truncated: { horizon: 2, events: [{ type: 'RESET_RESULT', observationText: 'observation 0' }, turn(0), turn(1)] },
  'horizon 0': { horizon: 0, events: [{ type: 'RESET_RESULT', observationText: 'observation 0' }] },
  'reset failed': { horizon: 5, events: [{ type: 'FAILED', message: 'reset broke' }] },
  aborted: { horizon: 5, events: [{ type: 'RESET_RESULT', observationText: 'observation 0' }, turn(0), { type: 'ABORT', reason: 'stop' }] },
  'events after the end are ignored': { horizon: 1, events: [{ type: 'RESET_RESULT', observationText: 'observation 0' }, turn(0), turn(1, true, 1), { type: 'FAILED', message: 'late' }] },
};

function play(start: FlowEpisodeStarter, horizon: number, events: FlowEvent[]): { calls: Call[]; status: string } {
  const calls: Call[] = [];
  const episode = start({ host: recordingHost(calls), slot: 3, taskId: 'babyai_1', groupId: 'g', trajectoryId: 't', step: 2, horizon, recordTurns: true });
  for (const event of events) episode.send(event);
  return { calls, status: episode.status };
}

describe('flow episodes as snapshots', () => {
  for (const [name, { horizon, events }] of Object.entries(scripts)) {
    it(`calls the host and ends exactly as a live actor does: ${name}`, () => {
      const viaSnapshots = play(snapshotEpisodes(), horizon, events);
      const viaActor = play(actorEpisodes(), horizon, events);
      expect(viaSnapshots).toEqual(viaActor);
      expect(viaSnapshots.status).toBe('done');
      expect(viaSnapshots.calls.filter(([kind]) => kind === 'finished')).toHaveLength(1);
    });
  }

  it('keeps episodes of one starter apart (one shared scope, separate snapshots)', () => {
    const start = snapshotEpisodes();
    const calls: Call[] = [];
    const host = recordingHost(calls);
    const a = start({ host, slot: 0, taskId: 'babyai_1', groupId: 'g', trajectoryId: 'a', step: 0, horizon: 3 });
    const b = start({ host, slot: 1, taskId: 'babyai_2', groupId: 'g', trajectoryId: 'b', step: 0, horizon: 3 });
    a.send({ type: 'RESET_RESULT', observationText: 'a0' });
    b.send({ type: 'RESET_RESULT', observationText: 'b0' });
    b.send(turn(0, true, 1));
    expect(a.status).toBe('active');
    expect(b.status).toBe('done');
    a.send(turn(0));
    a.send(turn(1, true, 1));
    const finished = calls.filter(([kind]) => kind === 'finished').map(([, slot, r]) => [slot, r?.trajectory.trajectoryId, r?.turnCount, r?.trajectory.outcome]);
    expect(finished).toEqual([
      [1, 'b', 1, 'success'],
      [0, 'a', 2, 'success'],
    ]);
  });
});
