/**
 * A small environment that declares tools, for tests of the tool-calling path: guess the vault's
 * number (task index mod 10) with `guess(number)`, or ask `hint()` whether it is even, within 12
 * turns. It reads only a call's canonical text (`toolCallText`) and records every step, so a test
 * can tell which replies reached it.
 */
import { checkToolCall, parseToolCallText, type ToolSpec } from '../../src/core/tools.js';
import type { StepResult } from '../../src/core/types.js';
import type { Environment, EnvironmentSpec } from '../../src/envs/environment.js';

export const VAULT_TOOLS: readonly ToolSpec[] = [
  { name: 'guess', description: 'Guess the number in the vault.', parameters: { type: 'object', properties: { number: { type: 'integer', description: 'A digit.' } }, required: ['number'] } },
  { name: 'hint', description: 'Ask whether the number is even.', parameters: { type: 'object', properties: {} } },
];

export const VAULT_INSTRUCTION = 'A vault holds a digit. Find it with the tools.';

/** Turns before an episode ends unsolved. */
const MAX_TURNS = 12;

/** The vault of task `index`, and every step it took (shared across instances of one spec). */
export function vaultSpec(steps: string[] = []): EnvironmentSpec {
  return {
    name: 'vault',
    description: 'guess a digit with tools (tests)',
    create: (): Environment => {
      let secret = 0;
      let turns = 0;
      let done = false;
      const result = (text: string, more: Partial<StepResult> = {}): StepResult => {
        done = done || more.done === true || turns >= MAX_TURNS;
        return { observation: { text }, reward: 0, ...more, done };
      };
      return {
        name: 'vault',
        instruction: () => VAULT_INSTRUCTION,
        reset: (index) => {
          secret = index % 10;
          turns = 0;
          done = false;
          return { text: 'The vault is locked.' };
        },
        step: (actionText): StepResult => {
          steps.push(actionText);
          if (done) return { observation: { text: 'The episode is over.' }, reward: 0, done: true, info: { invalid: true } };
          turns++;
          const parsed = parseToolCallText(actionText);
          const error = parsed.ok ? checkToolCall(parsed.call, VAULT_TOOLS) : parsed.message;
          if (!parsed.ok || error !== null) return result(error ?? 'Invalid call.', { info: { invalid: true } });
          if (parsed.call.name === 'hint') return result(secret % 2 === 0 ? 'Even.' : 'Odd.');
          const guess = parsed.call.arguments.number;
          if (guess === secret) return result('Open!', { reward: 1, done: true, success: true });
          return result(`Not ${String(guess)}.`);
        },
        close: () => {},
        tools: () => VAULT_TOOLS,
      };
    },
    catalog: () => ({ indices: () => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }),
    corpus: () => [VAULT_INSTRUCTION],
  };
}
