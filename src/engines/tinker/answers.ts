/**
 * How the client reads each answer a Tinker server gives, as pure functions: which statuses are
 * worth a retry, what a `retrieve_future` body means (a result, still pending, failed), and the
 * text of a failure. Two servers' shapes are covered:
 * - SkyRL tx: a finished future is the bare result; pending = the long poll ends in 408
 *   `{detail}`; failed = 400 `{detail}` (500 `{detail}` when the server cannot decode the error);
 *   unknown id = 404.
 * - hosted Tinker (the official SDK's reading): 200 `{type: "try_again", queue_state}`, 200
 *   `{status: "complete_metadata"}` (only when asked for), 200 `{error, category}`, 408 with
 *   `queue_state`, 410 for an expired future.
 */
import type { TinkerErrorCategory } from './errors.js';
import type { HttpAnswer } from './http.js';

/** What one `retrieve_future` answer says about the future. */
export type PollOutcome =
  | { readonly kind: 'result'; readonly body: unknown }
  /** Not finished yet: poll again (`try_again`, 408, `complete_metadata`). */
  | { readonly kind: 'pending'; readonly reason: string; readonly queueState?: string }
  | { readonly kind: 'failed'; readonly status: number; readonly detail: string; readonly category: TinkerErrorCategory }
  /** The server no longer has the future. */
  | { readonly kind: 'gone'; readonly status: number; readonly detail: string }
  /** A bad gateway, a 5xx, a 429, a bare 400 from a proxy: poll again after a back-off. */
  | { readonly kind: 'transient'; readonly status: number; readonly detail: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A server's explanation: `detail` (FastAPI; a 422's list of `{loc, msg}` is joined), `error`
 * (hosted Tinker), else the body's text; cut to 500 characters.
 * @example failureDetail({ status: 400, json: { detail: 'LoRA rank 16 must be between 1 and 8' }, text: '' }) // 'LoRA rank 16 must be between 1 and 8'
 */
export function failureDetail(answer: Pick<HttpAnswer, 'json' | 'text'>): string {
  const body = answer.json;
  let detail: string;
  if (isRecord(body) && typeof body.detail === 'string') detail = body.detail;
  else if (isRecord(body) && Array.isArray(body.detail)) {
    detail = body.detail
      .map((item) => (isRecord(item) ? `${Array.isArray(item.loc) ? item.loc.join('.') : '?'}: ${String(item.msg ?? '')}` : String(item)))
      .join('; ');
  } else if (isRecord(body) && typeof body.error === 'string') detail = body.error;
  else detail = answer.text.trim() === '' ? '(empty body)' : answer.text.trim();
  return detail.slice(0, 500);
}

/**
 * Whether a submission (or any non-poll request) answered with `status` is worth sending again
 * unchanged: 408 and 425 (not ready yet), 429 (rate limit), 5xx. Every other status is final.
 * @example isTransientStatus(503) // true
 */
export function isTransientStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

function categoryOf(value: unknown): TinkerErrorCategory {
  return value === 'user' || value === 'server' ? value : 'unknown';
}

/**
 * Reads one `retrieve_future` answer.
 * @example readPollAnswer({ status: 408, json: { detail: 'Timeout waiting for result' }, text: '' }).kind // 'pending'
 */
export function readPollAnswer(answer: Pick<HttpAnswer, 'status' | 'json' | 'text'>): PollOutcome {
  const { status, json } = answer;
  if (status === 200) {
    if (isRecord(json) && json.type === 'try_again') return { kind: 'pending', reason: 'try_again', queueState: typeof json.queue_state === 'string' ? json.queue_state : undefined };
    if (isRecord(json) && json.status === 'complete_metadata') return { kind: 'pending', reason: 'complete_metadata' };
    // A result never has a string `error` field next to a `category`-less body on either server,
    // so `{error}` alone is a failure too (category unknown).
    if (isRecord(json) && typeof json.error === 'string') return { kind: 'failed', status, detail: json.error.slice(0, 500), category: categoryOf(json.category) };
    return { kind: 'result', body: json };
  }
  if (status >= 200 && status < 300) return { kind: 'result', body: json };
  const detail = failureDetail(answer);
  if (status === 408) return { kind: 'pending', reason: '408', queueState: isRecord(json) && typeof json.queue_state === 'string' ? json.queue_state : undefined };
  if (status === 404 || status === 410) return { kind: 'gone', status, detail };
  // A 400 without a body is what a proxy in front of hosted Tinker injects now and then (the SDK
  // retries it three times); SkyRL's failed futures always carry `{detail}`.
  if (status === 400 && json === undefined) return { kind: 'transient', status, detail };
  if (status === 429 || status >= 500) return { kind: 'transient', status, detail };
  // SkyRL stores every failure the engine reports, user's or not, as 400 {detail}: the request as
  // sent will fail again, so it is final.
  return { kind: 'failed', status, detail, category: status >= 400 && status < 500 ? 'user' : 'unknown' };
}
