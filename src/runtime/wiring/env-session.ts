/**
 * Env-session adapters: episode → env session (reset, step), lead → env session (close).
 * Subjects: `src/runtime/wiring/message-flow.ts`.
 */
import { InvalidMessageError, TurnwiseError } from '../../core/errors.js';
import type { Observation, StepResult } from '../../core/types.js';
import type { EnvSessionAccepts, EnvSessionEmits } from '../../actors/env-session.js';
import type { Bus, Subscription } from '../../bus/bus.js';
import { subjects } from './message-flow.js';
import { type ActorPort, call, isObject, type Served } from './ports.js';

/**
 * Serves reset/step/close for one env session over the bus. Calls are answered one at a time in
 * arrival order, as the session serves one call at a time.
 * @example const served = serveEnvSession(bus, 'run1', 'env-0', sessionActor);
 */
export function serveEnvSession(bus: Bus, runId: string, sessionId: string, session: ActorPort<EnvSessionAccepts, EnvSessionEmits>): Served {
  let queue: Promise<unknown> = Promise.resolve();
  // Calls not answered yet. Closing answers them with an error: a session stopped in the middle of
  // a call (its episode gave up on a timeout) never emits the answer, and the bus waits for every
  // handler it started before it closes (a run hung after its last step, issue #32).
  const open = new Set<(error: Error) => void>();
  let closed = false;
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const guarded = () =>
      new Promise<T>((resolve, reject) => {
        if (closed) {
          reject(new TurnwiseError(`env session ${sessionId} is closed`));
          return;
        }
        open.add(reject);
        work().then(resolve, reject).finally(() => open.delete(reject));
      });
    const next = queue.then(guarded, guarded);
    queue = next.catch(() => undefined);
    return next;
  };
  const failure = (e: EnvSessionEmits): Error =>
    new TurnwiseError(e.type === 'SESSION_FAILED' ? e.error : e.type === 'REJECTED' ? `${e.request} rejected: ${e.reason}` : `unexpected ${e.type}`);
  const resetSubject = subjects.envReset(runId, sessionId);
  const stepSubject = subjects.envStep(runId, sessionId);
  const subs: Subscription[] = [
    bus.subscribe(resetSubject, (payload) => {
      if (!isObject(payload) || !Number.isInteger(payload.taskIndex)) throw new InvalidMessageError(resetSubject, 'expected { taskIndex: integer }');
      const taskIndex = payload.taskIndex as number;
      return serial(async () => {
        const answer = await call(session, { type: 'RESET', taskIndex }, ['RESET_DONE', 'SESSION_FAILED', 'REJECTED']);
        if (answer.type === 'RESET_DONE') return answer.observation;
        throw failure(answer);
      });
    }),
    bus.subscribe(stepSubject, (payload) => {
      if (!isObject(payload) || typeof payload.actionText !== 'string') throw new InvalidMessageError(stepSubject, 'expected { actionText: string }');
      const actionText = payload.actionText;
      return serial(async () => {
        const answer = await call(session, { type: 'STEP', actionText }, ['STEP_DONE', 'SESSION_FAILED', 'REJECTED']);
        if (answer.type === 'STEP_DONE') return answer.result;
        throw failure(answer);
      });
    }),
    bus.subscribe(subjects.envClose(runId, sessionId), () => serial(async () => {
      await call(session, { type: 'CLOSE' }, ['CLOSED']);
      return null;
    })),
  ];
  return {
    close: () => {
      closed = true;
      for (const s of subs) s.unsubscribe();
      for (const reject of [...open]) reject(new TurnwiseError(`env session ${sessionId} closed before it answered`));
      open.clear();
    },
  };
}

/** Client side of one env session over the bus. */
export interface RemoteEnvSession {
  reset(taskIndex: number): Promise<Observation>;
  step(actionText: string): Promise<StepResult>;
  close(): Promise<void>;
}

/**
 * Client side of an env session: what an episode's `reset` / `step` effects call.
 * @example const env = remoteEnvSession(bus, 'run1', 'env-0', 30_000); const obs = await env.reset(12);
 */
export function remoteEnvSession(bus: Bus, runId: string, sessionId: string, timeoutMs: number): RemoteEnvSession {
  const resetSubject = subjects.envReset(runId, sessionId);
  const stepSubject = subjects.envStep(runId, sessionId);
  return {
    async reset(taskIndex: number): Promise<Observation> {
      const reply = await bus.request(resetSubject, { taskIndex }, { timeoutMs });
      if (!isObject(reply) || typeof reply.text !== 'string') throw new InvalidMessageError(resetSubject, 'expected an Observation { text }');
      return reply as unknown as Observation;
    },
    async step(actionText: string): Promise<StepResult> {
      const reply = await bus.request(stepSubject, { actionText }, { timeoutMs });
      if (!isObject(reply) || !isObject(reply.observation) || typeof reply.reward !== 'number' || typeof reply.done !== 'boolean') {
        throw new InvalidMessageError(stepSubject, 'expected a StepResult { observation, reward, done }');
      }
      return reply as unknown as StepResult;
    },
    async close(): Promise<void> {
      await bus.request(subjects.envClose(runId, sessionId), {}, { timeoutMs });
    },
  };
}
