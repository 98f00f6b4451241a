import { CommanderError, InvalidArgumentError as CommanderArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import { EXIT, exitCodeForSignal, exitCodeOf, UsageError } from '../../src/cli/exit-codes.js';
import { reportFailure } from '../../src/cli/failure.js';
import { ChatTemplateError, ModelFilesError } from '../../src/models/chat/errors.js';
import { CheckpointError, EnvironmentError, InvalidArgumentError, InvalidConfigError, RequestTimeoutError } from '../../src/core/errors.js';

function report(error: unknown, debug: boolean): { code: number; text: string } {
  let text = '';
  const code = reportFailure(error, { debug, write: (t) => (text += t) });
  return { code, text };
}

describe('exit codes', () => {
  it('maps usage and config mistakes to 2', () => {
    expect(exitCodeOf(new UsageError('give a config file'))).toBe(EXIT.usage);
    expect(exitCodeOf(new InvalidConfigError('train.steps', 'expected number'))).toBe(2);
    expect(exitCodeOf(InvalidArgumentError.format('--agents', 'required'))).toBe(2);
    expect(exitCodeOf(new CheckpointError('runs/x', 'not a run folder'))).toBe(2);
    expect(exitCodeOf(new CommanderError(1, 'commander.unknownOption', "error: unknown option '--x'"))).toBe(2);
    expect(exitCodeOf(new CommanderArgumentError('expected a positive integer'))).toBe(2);
  });

  it('gives every error of a model folder the same code as a bad checkpoint: 2', () => {
    expect(exitCodeOf(new ModelFilesError('m/tokenizer.json', 'cannot read it'))).toBe(exitCodeOf(new CheckpointError('m/model.safetensors', 'truncated')));
    expect(exitCodeOf(new ModelFilesError('m/generation_config.json:eos_token_id', 'not a token id'))).toBe(EXIT.usage);
    expect(exitCodeOf(new ChatTemplateError('m/tokenizer_config.json:chat_template', 'refused: over budget'))).toBe(EXIT.usage);
  });

  it('maps failures while running to 1, and help or version to 0', () => {
    expect(exitCodeOf(new EnvironmentError('agentgym', 'connection refused'))).toBe(EXIT.failure);
    expect(exitCodeOf(new RequestTimeoutError('run.x.act', 1000))).toBe(1);
    expect(exitCodeOf(new Error('bug'))).toBe(1);
    expect(exitCodeOf('a thrown string')).toBe(1);
    expect(exitCodeOf(new CommanderError(0, 'commander.version', '0.1.0'))).toBe(EXIT.ok);
    expect(exitCodeOf(new CommanderError(0, 'commander.helpDisplayed', '(outputHelp)'))).toBe(0);
  });

  it('gives 128 + the signal number for SIGINT and SIGTERM', () => {
    expect(exitCodeForSignal('SIGINT')).toBe(130);
    expect(exitCodeForSignal('SIGTERM')).toBe(143);
  });
});

describe('reportFailure', () => {
  it('prints one line naming the error, without a stack trace, for a usage error', () => {
    const { code, text } = report(new UsageError('--split must be train or test'), false);
    expect(code).toBe(2);
    expect(text).toBe('UsageError: --split must be train or test\n');
  });

  it('prints the stack and causes with --debug', () => {
    const cause = new Error('ENOENT: no such file');
    const { code, text } = report(new InvalidConfigError('<root>', 'cannot read config file x.yaml', { cause }), true);
    expect(code).toBe(2);
    expect(text).toMatch(/^InvalidConfigError: invalid config at '<root>': cannot read config file x\.yaml\n\s+at /);
    expect(text).toMatch(/caused by: Error: ENOENT: no such file\n\s+at /);
  });

  it('tells how to see the stack of a runtime failure, and prints nothing for commander errors (commander already did)', () => {
    const failure = report(new Error('port in use'), false);
    expect(failure).toEqual({ code: 1, text: 'Error: port in use\n(run again with --debug for the stack trace)\n' });
    expect(report(new CommanderError(1, 'commander.unknownCommand', "error: unknown command 'x'"), false)).toEqual({ code: 2, text: '' });
  });
});
