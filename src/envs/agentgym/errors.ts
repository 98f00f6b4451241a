/**
 * Errors of the AgentGym HTTP client. Each is an `EnvironmentError` (so an env session that hits
 * one ends its episode as `error` with this message) and names the server URL and the path at fault.
 */
import { EnvironmentError } from '../../core/errors.js';

/** Where a failed request went. */
export interface RequestSite {
  /** Server base URL, e.g. `http://127.0.0.1:36003`. */
  readonly url: string;
  /** Request path, e.g. `/step`. */
  readonly path: string;
}

/**
 * The server answered HTTP 200 with `{"error": "..."}` (AgentGym's servers catch their exceptions
 * and report them this way: an unknown id, stepping a finished task, a bad task index).
 * @example new AgentGymServerError('sciworld', { url, path: '/step' }, 'The id 3 is not valid.')
 */
export class AgentGymServerError extends EnvironmentError {
  constructor(
    envName: string,
    readonly site: RequestSite,
    readonly serverMessage: string,
  ) {
    super(envName, `${site.url}${site.path} answered with an error: ${serverMessage}`);
  }
}

/**
 * The server answered something the protocol does not allow: malformed JSON, a missing key, a
 * value of the wrong type, or a validation error (HTTP 422) for a request we built.
 * @example new AgentGymProtocolError('webshop', { url, path: '/reset' }, 'expected [observation, null], got {}')
 */
export class AgentGymProtocolError extends EnvironmentError {
  constructor(
    envName: string,
    readonly site: RequestSite,
    readonly detail: string,
  ) {
    super(envName, `${site.url}${site.path}: protocol error: ${detail}`);
  }
}

/**
 * The request did not get a usable answer: connection refused or dropped, a timeout, or an HTTP
 * status other than 200 (after the retries the request was allowed).
 * @example new AgentGymTransportError('babyai', { url, path: '/step' }, 'timed out after 20000 ms', { kind: 'timeout', attempts: 1 })
 */
export class AgentGymTransportError extends EnvironmentError {
  readonly kind: TransportFailureKind;
  readonly status: number | null;
  readonly attempts: number;
  constructor(
    envName: string,
    readonly site: RequestSite,
    detail: string,
    info: { kind: TransportFailureKind; status?: number; attempts: number; cause?: unknown },
  ) {
    super(envName, `${site.url}${site.path}: ${detail} (${info.attempts} attempt${info.attempts === 1 ? '' : 's'})`, { cause: info.cause });
    this.kind = info.kind;
    this.status = info.status ?? null;
    this.attempts = info.attempts;
  }
}

/** What went wrong on the wire. */
export type TransportFailureKind = 'connection' | 'timeout' | 'status' | 'aborted';
