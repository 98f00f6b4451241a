/**
 * An actor's I/O call started by an entry action, its outcome sent back to the actor as an event:
 * what an invoked `fromPromise` actor does, without the child actor. Why: xstate builds a whole
 * `Actor` per invoke (mailbox, system registration, abort controller, start and stop); the episode
 * and env-session machines make three such calls per agent turn, and at the quickstart's ~25,000
 * turns that was a third of the main thread's xstate time.
 *
 * Contract, as with an invoke: the call gets an `AbortSignal` that aborts when the call is
 * abandoned (the machine leaves the waiting state before the outcome: a deadline, ABORT, CLOSE);
 * an abandoned call's outcome is dropped, so a late answer never reaches a later state; a call
 * that throws synchronously fails like one that rejects. At most one call per actor is in flight.
 * One difference: `actor.stop()` runs no exit action, so a call in flight when an actor is stopped
 * from outside keeps its signal (its outcome is still dropped); an invoked actor's was aborted. No
 * caller relies on it: episodes are ended with ABORT (which aborts), and the env sessions that the
 * rollout and the NATS env leases stop from outside call `env.reset` / `env.step`, which take no signal.
 */

/** The two methods of an actor the call needs (an xstate `self` fits as is). */
export interface EffectTarget<E> {
  send(event: E): void;
  getSnapshot(): { readonly status: string };
}

// The in-flight call of each actor, for `abandonEffect` (exit actions cannot reach the entry's locals).
const inFlight = new WeakMap<object, AbortController>();

/**
 * Starts `run` for `actor`; its result goes back as `done(output)`, its error as `failed(error)`.
 * @example startEffect(self, (signal) => env.step(text, signal), (result) => ({ type: 'STEPPED', result }), (error) => ({ type: 'FAILED', error }));
 */
export function startEffect<T, E>(actor: EffectTarget<E>, run: (signal: AbortSignal) => Promise<T> | T, done: (output: T) => E, failed: (error: unknown) => E): void {
  const controller = new AbortController();
  inFlight.set(actor, controller);
  const settle = (event: () => E): void => {
    if (controller.signal.aborted || inFlight.get(actor) !== controller) return; // abandoned: the actor moved on
    inFlight.delete(actor);
    if (actor.getSnapshot().status === 'active') actor.send(event());
  };
  let pending: Promise<T>;
  try {
    pending = Promise.resolve(run(controller.signal));
  } catch (error) {
    pending = Promise.reject(error);
  }
  pending.then(
    (output) => settle(() => done(output)),
    (error: unknown) => settle(() => failed(error)),
  );
}

/**
 * Abandons `actor`'s call in flight, if any: its signal aborts and its outcome will be dropped.
 * @example abandonEffect(self); // in the waiting state's exit action
 */
export function abandonEffect(actor: object): void {
  const controller = inFlight.get(actor);
  if (controller === undefined) return;
  inFlight.delete(actor);
  controller.abort();
}
