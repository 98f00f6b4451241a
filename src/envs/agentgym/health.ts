/**
 * Health of one AgentGym server as the client sees it: consecutive failed requests, reported once
 * the count reaches a threshold and again each time it doubles (3, 6, 12, ...), and once more when
 * the server recovers. Episodes that hit a failure end as `error` and their sessions are
 * recreated (see `src/runtime/rollout.ts`); this report is how a person learns that a server keeps
 * failing while the run goes on.
 */

/** One report about a server. */
export interface AgentGymHealthReport {
  readonly kind: 'failing' | 'recovered';
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
  /** One line for logs. */
  readonly message: string;
}

type Listener = (report: AgentGymHealthReport) => void;
const listeners = new Set<Listener>();

/**
 * Subscribes to health reports of every AgentGym server this process talks to. While nobody is
 * subscribed, reports go to stderr as one line each.
 * @example const stop = onAgentGymHealthReport((r) => store.logEvent(step, 'agentgym/health', r.message));
 */
export function onAgentGymHealthReport(listener: Listener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function publish(report: AgentGymHealthReport): void {
  if (listeners.size === 0) {
    process.stderr.write(`${report.message}\n`);
    return;
  }
  for (const listener of listeners) listener(report);
}

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
}
