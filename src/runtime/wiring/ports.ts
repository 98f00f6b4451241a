/**
 * Actor ports: the two methods of an xstate actor the bus adapters use (an `Actor` fits as is),
 * and the helpers every adapter family shares.
 */
/**
 * What an adapter needs from a running actor: send it events, listen to what it emits.
 * @example const port: ActorPort<SamplerAccepts, SamplerEmits> = createActor(samplerLogic, { input }).start();
 */
export interface ActorPort<A extends { type: string }, E extends { type: string }> {
  send(event: A): void;
  on(type: E['type'], handler: (event: E) => void): { unsubscribe(): void };
}

/**
 * Undo what a `serve*` adapter set up.
 * @example const served = serveLearner(bus, 'run1', learnerActor); served.close();
 */
export interface Served {
  close(): void;
}

/**
 * Sends `event` and resolves with the first emitted event whose type is in `answers` (and that
 * `accept` takes): a request/reply over an actor's send/emit.
 * @example const answer = await call(session, { type: 'RESET', taskIndex: 3 }, ['RESET_DONE', 'SESSION_FAILED']);
 */
export function call<A extends { type: string }, E extends { type: string }>(port: ActorPort<A, E>, event: A, answers: readonly E['type'][], accept: (e: E) => boolean = () => true): Promise<E> {
  return new Promise<E>((resolve) => {
    const subs: { unsubscribe(): void }[] = [];
    const done = (e: E) => {
      if (!accept(e)) return;
      for (const s of subs) s.unsubscribe();
      resolve(e);
    };
    // Listen before sending: some answers are emitted synchronously inside `send`.
    for (const type of answers) subs.push(port.on(type, done));
    port.send(event);
  });
}

/**
 * Whether a decoded message payload is an object whose fields can be checked.
 * @example if (!isObject(payload)) throw new InvalidMessageError(subject, 'expected an object');
 */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
