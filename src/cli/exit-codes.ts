/**
 * The exit codes of the `turnwise` command, and which failure gets which. A script (or CI) can tell
 * a usage or config mistake (fix the command line or the YAML) from a failure while running (look
 * at the run) and from a stop on a signal.
 *
 * | code | meaning |
 * |---|---|
 * | 0 | success |
 * | 1 | runtime failure: the command was well formed but the work failed (a run ended `failed`, an environment or server failed, a bug) |
 * | 2 | usage or input error: unknown command or flag, bad flag value, invalid config, a path that is not a run or checkpoint, a model folder whose files are wrong (weights, config.json, tokenizer files, a chat template that refuses or overruns its budget) |
 * | 130 | stopped by SIGINT (Ctrl-C), after a clean stop (`train` checkpoints first) |
 * | 143 | stopped by SIGTERM, after a clean stop |
 */
import { CommanderError } from 'commander';
import { CheckpointError, InvalidArgumentError, InvalidConfigError, TurnwiseError } from '../core/errors.js';

/** The exit codes, by name. */
export const EXIT = {
  ok: 0,
  failure: 1,
  usage: 2,
  sigint: 130,
  sigterm: 143,
} as const;

/** One of {@link EXIT}'s values. */
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/**
 * A mistake in how the command was called that the argument parser cannot see (a missing config
 * file argument, two flags that exclude each other). Exits 2 with its message, never a stack trace.
 * @example throw new UsageError('give a config file, or --resume <runDir>');
 */
export class UsageError extends TurnwiseError {}

/**
 * The exit code for an error that ended a command: 2 for what the user can fix in the command line
 * or config (parser errors, {@link UsageError}, invalid config or arguments, a location that is not
 * a run or checkpoint), 0 for commander's help and version exits, 1 for everything else.
 * @example process.exitCode = exitCodeOf(err);
 */
export function exitCodeOf(error: unknown): ExitCode {
  if (error instanceof CommanderError) return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  if (error instanceof UsageError || error instanceof InvalidConfigError || error instanceof InvalidArgumentError || error instanceof CheckpointError) return EXIT.usage;
  // A run folder that holds a run or is being written: the command line names the wrong folder.
  // Matched by name: importing the run-folder modules here would load the store for `--help`.
  if (error instanceof Error && (error.name === 'RunFolderExistsError' || error.name === 'RunFolderLockedError')) return EXIT.usage;
  // A model folder's files at fault, whichever file: one class, one code (the loader's own errors are CheckpointErrors).
  if (error instanceof Error && ['ModelFilesError', 'ChatTemplateError', 'ChatTemplateBudgetError'].includes(error.name)) return EXIT.usage;
  return EXIT.failure;
}

/**
 * The exit code of a command stopped by a signal (128 + the signal's number, as shells report it).
 * @example process.exitCode = exitCodeForSignal('SIGTERM'); // 143
 */
export function exitCodeForSignal(signal: 'SIGINT' | 'SIGTERM'): ExitCode {
  return signal === 'SIGINT' ? EXIT.sigint : EXIT.sigterm;
}
