/**
 * Named error classes. Every error names the field, message or action at fault so that a user can
 * fix the input without reading the source.
 */

/** Base class of every error turnwise throws on purpose. */
export class TurnwiseError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * A configuration value is missing, unknown or of the wrong type.
 * @example throw new InvalidConfigError('algorithm.lr', 'expected a positive number, got -1')
 */
export class InvalidConfigError extends TurnwiseError {
  constructor(
    readonly path: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid config at '${path}': ${detail}`, options);
  }
}

/**
 * A function or message argument is invalid.
 * @example throw InvalidArgumentError.format('taskId', 'expected <env>_<index>, got "foo"')
 */
export class InvalidArgumentError extends TurnwiseError {
  constructor(
    readonly property: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid '${property}': ${detail}`, options);
  }
  static format(property: string, detail: string): InvalidArgumentError {
    return new InvalidArgumentError(property, detail);
  }
}

/** The agent's text could not be parsed into an action. Environments turn this into an observation, never a crash. */
export class UnparsableActionError extends TurnwiseError {
  constructor(
    readonly actionText: string,
    detail: string,
  ) {
    super(`unparsable action ${JSON.stringify(actionText.slice(0, 120))}: ${detail}`);
  }
}

/** A message on the bus did not have the expected shape. */
export class InvalidMessageError extends TurnwiseError {
  constructor(
    readonly subject: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`invalid message on '${subject}': ${detail}`, options);
  }
}

/** A request on the bus got no reply in time. */
export class RequestTimeoutError extends TurnwiseError {
  constructor(
    readonly subject: string,
    readonly timeoutMs: number,
  ) {
    super(`request on '${subject}' timed out after ${timeoutMs} ms`);
  }
}

/** A request was sent to a subject that has no responder. */
export class NoResponderError extends TurnwiseError {
  constructor(readonly subject: string) {
    super(`no responder for '${subject}'`);
  }
}

/** Data produced by a policy version too old for the learner's staleness bound. */
export class StalePolicyError extends TurnwiseError {
  constructor(
    readonly policyVersion: number,
    readonly learnerVersion: number,
    readonly bound: number,
  ) {
    super(`policy version ${policyVersion} is ${learnerVersion - policyVersion} versions behind learner version ${learnerVersion} (bound ${bound})`);
  }
}

/** The environment failed (crashed, timed out, or returned an error). Ends the episode as `error`. */
export class EnvironmentError extends TurnwiseError {
  constructor(
    readonly envName: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`environment '${envName}' failed: ${detail}`, options);
  }
}

/** A checkpoint or run folder is missing or inconsistent. */
export class CheckpointError extends TurnwiseError {
  constructor(
    readonly location: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`checkpoint '${location}': ${detail}`, options);
  }
}
