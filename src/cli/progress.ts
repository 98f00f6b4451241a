/**
 * Terminal progress for `turnwise train`: a cli-progress bar (chosen because it is the most used,
 * dependency-free Node progress bar and redraws in place) showing step, training success rate,
 * mean turns, horizon, tokens/s, the latest held-out success and the ETA. Falls back to one plain
 * line per step when stdout is not a TTY (CI logs, pipes), so logs stay readable.
 */
import cliProgress from 'cli-progress';
import type { RunEvent } from '../runtime/run-events.js';

/** The per-step figures, as both the bar and the plain (piped) line show them. */
const PAYLOAD_FORMAT = 'success {success} | turns {turns} | horizon {horizon} | {tps} tok/s | eval {evalSuccess}';

/** Renders run events to the terminal. @example const p = new TrainProgress(60); p.handle(event); p.stop(); */
export class TrainProgress {
  private readonly bar: cliProgress.SingleBar | null;
  private lastEval = '—';
  private started = false;
  private readonly startedAt = performance.now();

  constructor(
    private readonly totalSteps: number,
    private readonly out: NodeJS.WriteStream = process.stdout,
  ) {
    this.bar = out.isTTY
      ? new cliProgress.SingleBar(
          {
            format: `step {value}/{total} [{bar}] ${PAYLOAD_FORMAT} | ETA {eta_formatted}`,
            barsize: 20,
            hideCursor: true,
            etaBuffer: 8,
          },
          cliProgress.Presets.shades_classic,
        )
      : null;
  }

  /** Prints a line above the bar (or plainly when there is no bar). */
  log(line: string): void {
    // Clear the bar's line first; the bar redraws itself on its next update.
    if (this.bar && this.started) this.out.write(`\r\x1b[2K${line}\n`);
    else this.out.write(`${line}\n`);
  }

  handle(event: RunEvent): void {
    switch (event.type) {
      case 'started':
        this.log(event.message);
        if (this.bar) {
          this.bar.start(this.totalSteps, event.step, this.payload(undefined));
          this.started = true;
        }
        return;
      case 'step': {
        const payload = this.payload(event.metrics);
        if (this.bar) this.bar.update(event.step, payload);
        // The bar's line without the bar and the ETA, so logs read like the terminal.
        else this.log(`step ${event.step}/${this.totalSteps} ${PAYLOAD_FORMAT.replace(/\{(\w+)\}/g, (_, key: string) => payload[key] ?? '')}`);
        return;
      }
      case 'eval':
        this.lastEval = event.successRate.toFixed(3);
        this.log(
          `eval @ step ${event.step} (${this.elapsed()}): held-out success ${event.successRate.toFixed(3)} on ${event.episodes} ${event.split} tasks (mean turns ${event.meanTurns.toFixed(2)})`,
        );
        return;
      case 'alarm':
        this.log(`⚠ alarm at step ${event.step} (${this.elapsed()}): ${event.message} — ${event.consequence}`);
        return;
      case 'info':
        this.log(event.message);
        return;
    }
  }

  /** Wall time since the progress display started, e.g. `1m52s`. */
  private elapsed(): string {
    const seconds = Math.round((performance.now() - this.startedAt) / 1000);
    return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
  }

  stop(): void {
    if (this.bar && this.started) {
      // cli-progress restores the cursor it saved at start() before its final newline; lines logged
      // since then moved the bar down, so save the bar's current line instead (ESC 7), or the
      // summary that follows would overwrite the last logged lines.
      this.out.write('\r\x1b7');
    }
    this.bar?.stop();
  }

  private payload(metrics: Readonly<Record<string, number>> | undefined): Record<string, string> {
    const fmt = (name: string, digits: number) => {
      const value = metrics?.[name];
      return value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);
    };
    return {
      success: fmt('rollout/successRate', 2),
      turns: fmt('rollout/meanTurns', 2),
      horizon: fmt('horizon/current', 0),
      tps: fmt('throughput/trainTokensPerSec', 0),
      evalSuccess: this.lastEval,
    };
  }
}
