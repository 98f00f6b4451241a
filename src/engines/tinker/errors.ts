/**
 * What a call to a Tinker server can end in when it does not succeed. Each error names the call
 * (`forward_backward`, `retrieve_future`, …), the server (its URL without credentials, path or
 * query) and what the server said, so a user can tell a bad request from a sick server without
 * reading the source. No error ever carries the API key: server text is redacted before it is kept.
 */
import { TurnwiseError } from '../../core/errors.js';

/** Who is at fault in a failed request, as hosted Tinker labels it (`RequestFailedResponse.category`). */
export type TinkerErrorCategory = 'user' | 'server' | 'unknown';

/** Where a failed call went and what it was. */
export interface TinkerCallSite {
  /** The route's name, e.g. `forward_backward` (a poll of its future keeps the name of the call). */
  readonly call: string;
  /** The server's origin, e.g. `https://tinker.example:8000` (never credentials). */
  readonly server: string;
  /** The future's request id once the server gave one. */
  readonly requestId?: string;
}

function where(site: TinkerCallSite): string {
  return `Tinker '${site.call}' at ${site.server}${site.requestId !== undefined ? ` (request ${site.requestId})` : ''}`;
}

/**
 * The server answered and refused or failed the request: an HTTP 4xx, a 400 `{detail}` from a
 * future (SkyRL), or a 200 `{error, category}` (hosted Tinker). Retrying the same request will not
 * help when `category` is `user`.
 * @example
 * try { await client.forwardBackward(model, input); } catch (e) { if (e instanceof TinkerRequestError && e.status === 422) … }
 */
export class TinkerRequestError extends TurnwiseError {
  constructor(
    readonly site: TinkerCallSite,
    /** HTTP status of the answer (200 for a `{error, category}` body). */
    readonly status: number,
    /** What the server said, redacted, at most a few hundred characters. */
    readonly detail: string,
    readonly category: TinkerErrorCategory,
    /** Attempts the request took, this answer's included (> 1 when earlier ones got no answer). */
    readonly attempts = 1,
  ) {
    super(`${where(site)} failed (HTTP ${status}, ${category} error): ${detail}`);
  }
}

/**
 * No usable answer came back in time: connection refused or lost, request timeouts, 5xx, or the
 * server kept asking to wait past the future's deadline, after every retry the settings allow.
 * @example
 * if (error instanceof TinkerUnavailableError) console.error(`${error.attempts} attempts: ${error.message}`);
 */
export class TinkerUnavailableError extends TurnwiseError {
  constructor(
    readonly site: TinkerCallSite,
    /** Attempts made before giving up. */
    readonly attempts: number,
    /** The last thing that went wrong, redacted. */
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${where(site)} got no usable answer after ${attempts} attempt(s): ${detail}`, options);
  }
}

/**
 * The server no longer knows the future (404 "Future not found", 410 gone): it restarted with a
 * fresh database, or the result expired. The request may or may not have run.
 * @example
 * if (error instanceof TinkerFutureGoneError) console.error(`request ${error.site.requestId} is lost`);
 */
export class TinkerFutureGoneError extends TurnwiseError {
  constructor(
    readonly site: TinkerCallSite,
    readonly status: number,
    readonly detail: string,
  ) {
    super(`${where(site)}: the server no longer has this request's result (HTTP ${status}: ${detail}); it restarted without its database or the result expired`);
  }
}

/**
 * The server answered 2xx with a body turnwise cannot read as the call's result (a field missing,
 * a length that does not match the request). Names the field at fault.
 * @example
 * throw new TinkerProtocolError(site, 'loss_fn_outputs[0].logprobs', 'expected 24 values, got 23');
 */
export class TinkerProtocolError extends TurnwiseError {
  constructor(
    readonly site: TinkerCallSite,
    readonly field: string,
    readonly detail: string,
  ) {
    super(`${where(site)} answered a body turnwise cannot read at '${field}': ${detail}`);
  }
}
