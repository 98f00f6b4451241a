/**
 * How a failed command reports itself: one line naming the error (`InvalidConfigError: invalid
 * config at 'train.steps': …`), no stack trace unless `--debug` asked for one, and the exit code of
 * `exit-codes.ts`. Commander has already printed its own parse errors (and the help after them).
 */
import { CommanderError } from 'commander';
import { redactCredentials } from '../core/redact.js';
import { EXIT, type ExitCode, exitCodeOf } from './exit-codes.js';

/** Where a failure is reported. */
export interface FailureOutput {
  /** Print stack traces (and causes). */
  readonly debug: boolean;
  readonly write: (text: string) => void;
}

/**
 * Prints `error` (unless commander already did) and returns the exit code to leave with.
 * @example process.exitCode = reportFailure(err, { debug: false, write: (t) => process.stderr.write(t) });
 */
export function reportFailure(error: unknown, failure: FailureOutput): ExitCode {
  // Whatever an error says (a cause from a library, a stack), a URL's credentials are not printed.
  const out: FailureOutput = { debug: failure.debug, write: (text) => failure.write(redactCredentials(text)) };
  const code = exitCodeOf(error);
  if (error instanceof CommanderError) {
    // Commander printed the message (and the help) already; help and --version exit 0.
    if (out.debug && code !== EXIT.ok) out.write(`${error.stack ?? error.message}\n`);
    return code;
  }
  const err = error instanceof Error ? error : new Error(String(error));
  if (out.debug) {
    out.write(`${err.stack ?? `${err.name}: ${err.message}`}\n`);
    for (let cause = err.cause; cause instanceof Error; cause = cause.cause) out.write(`caused by: ${cause.stack ?? cause.message}\n`);
  } else {
    out.write(`${err.name}: ${err.message}\n`);
    if (code === EXIT.failure) out.write('(run again with --debug for the stack trace)\n');
  }
  return code;
}
