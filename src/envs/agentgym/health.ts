/**
 * Health of one AgentGym server as the client sees it: consecutive failed requests, reported once
 * the count reaches a threshold and again each time it doubles (3, 6, 12, ...), and once more when
 * the server recovers. Episodes that hit a failure end as `error` and their sessions are
 * recreated (see `src/runtime/rollout.ts`); each such server-side instance is reported too — the
 * failed one (`session-failed`) and the fresh one that replaced it (`session-recreated`) — while
 * the server is not already reported as failing (then the doubling `failing` reports stand for
 * them). `trainRun` records every report as an `agentgym/health` event of the run, so they show in
 * `turnwise ui`; with nobody subscribed they go to stderr.
 */

/** One report about a server. */
export interface AgentGymHealthReport {
  readonly kind: 'failing' | 'recovered' | 'session-failed' | 'session-recreated';
  /** Server base URL. */
  readonly url: string;
  /** Environment type served there (e.g. `sciworld`). */
  readonly type: string;
  /** Failed requests in a row (0 for `recovered`). */
  readonly consecutiveFailures: number;
  /** Failed requests since the client started. */
  readonly totalFailures: number;
  /** Message of the last failure. */
  readonly lastError: string;
  /** Server-side instance id (session reports). */
  readonly instanceId?: number;
  /** The failed instance a `session-recreated` one replaces. */
  readonly replaces?: number;
  /** One line for logs. */
  readonly message: string;
}

type Listener = (report: AgentGymHealthReport) => void;
const listeners = new Set<Listener>();

/**
 * Subscribes to health reports of every AgentGym server this process talks to (or only of those
 * whose URL starts with `filter.url`). While nobody is subscribed, reports go to stderr as one
 * line each.
 * @example const stop = onAgentGymHealthReport((r) => store.logEvent(step, 'agentgym/health', r.message, r), { url: 'http://127.0.0.1:36002' });
 */
export function onAgentGymHealthReport(listener: Listener, filter: { readonly url?: string } = {}): () => void {
  const prefix = filter.url?.replace(/\/+$/, '');
  const subscribed: Listener = prefix === undefined ? listener : (report) => report.url.startsWith(prefix) && listener(report);
  listeners.add(subscribed);
  return () => listeners.delete(subscribed);
}

function publish(report: AgentGymHealthReport): void {
  if (listeners.size === 0) {
    process.stderr.write(`${report.message}\n`);
    return;
  }
  for (const listener of listeners) listener(report);
}

// Failed instances remembered for pairing with their replacements (bounded: a dead server fails many).
const MAX_PENDING_REPLACEMENTS = 1024;

/**
 * Counts failures of one server and reports them.
 * @example
 * const monitor = new ServerMonitor('http://127.0.0.1:36003', 'sciworld');
 * monitor.failure(new Error('ECONNREFUSED')); // reported at the 3rd in a row
 */
export class ServerMonitor {
  private consecutive = 0;
  private total = 0;
  private nextReportAt: number;
  private lastError = '';
  private readonly failedInstances: number[] = [];

  constructor(
    readonly url: string,
    readonly type: string,
    private readonly reportAfter = 3,
  ) {
    this.nextReportAt = reportAfter;
  }

  /** Failed requests in a row right now. */
  get consecutiveFailures(): number {
    return this.consecutive;
  }

  /** Failed requests so far. */
  get totalFailures(): number {
    return this.total;
  }

  /** Records a request that failed for good (after its retries). */
  failure(error: unknown): void {
    this.consecutive++;
    this.total++;
    this.lastError = error instanceof Error ? error.message : String(error);
    if (this.consecutive >= this.nextReportAt) {
      this.nextReportAt = this.consecutive * 2;
      publish({
        kind: 'failing',
        url: this.url,
        type: this.type,
        consecutiveFailures: this.consecutive,
        totalFailures: this.total,
        lastError: this.lastError,
        message:
          `agentgym: ${this.type} server ${this.url} failed ${this.consecutive} requests in a row (${this.total} in all; last: ${this.lastError}); ` +
          'its episodes end as error, their sessions are recreated, and the run goes on',
      });
    }
  }

  /** Records a request that got a usable answer. */
  success(): void {
    if (this.consecutive === 0) return;
    const wasReported = this.consecutive >= this.reportAfter;
    this.consecutive = 0;
    this.nextReportAt = this.reportAfter;
    if (wasReported) {
      publish({
        kind: 'recovered',
        url: this.url,
        type: this.type,
        consecutiveFailures: 0,
        totalFailures: this.total,
        lastError: this.lastError,
        message: `agentgym: ${this.type} server ${this.url} answers again (${this.total} failed requests so far)`,
      });
    }
  }

  /** Records a server-side instance given up after a failure (its episode ends as `error`). */
  sessionFailed(instanceId: number, error: unknown): void {
    this.failedInstances.push(instanceId);
    if (this.failedInstances.length > MAX_PENDING_REPLACEMENTS) this.failedInstances.shift();
    if (this.consecutive >= this.reportAfter) return; // the `failing` reports cover it
    const lastError = error instanceof Error ? error.message : String(error);
    publish({
      kind: 'session-failed',
      url: this.url,
      type: this.type,
      consecutiveFailures: this.consecutive,
      totalFailures: this.total,
      lastError,
      instanceId,
      message: `agentgym: ${this.type} instance ${instanceId} on ${this.url} failed (${lastError}); its episode ends as error and a fresh instance replaces it`,
    });
  }

  /** Records a fresh server-side instance; reported when it replaces a failed one. */
  sessionCreated(instanceId: number): void {
    const replaces = this.failedInstances.shift();
    if (replaces === undefined || this.consecutive >= this.reportAfter) return;
    publish({
      kind: 'session-recreated',
      url: this.url,
      type: this.type,
      consecutiveFailures: this.consecutive,
      totalFailures: this.total,
      lastError: this.lastError,
      instanceId,
      replaces,
      message: `agentgym: ${this.type} instance ${instanceId} on ${this.url} replaces failed instance ${replaces}`,
    });
  }
}
