/**
 * A small environment that declares tools, for tests of the tool-calling path: guess the vault's
 * number (task index mod 10) with `guess(number)`, or ask `hint()` whether it is even. It reads
 * only a call's canonical text (`toolCallText`) and counts its steps, so a test can tell which
 * replies reached it.
 */
import { parseToolCallText, type ToolSpec } from '../../src/core/tools.js';
import type { StepResult } from '../../src/core/types.js';
import type { Environment, EnvironmentSpec } from '../../src/envs/environment.js';

export const VAULT_TOOLS: readonly ToolSpec[] = [
  { name: 'guess', description: 'Guess the number in the vault.', parameters: { type: 'object', properties: { number: { type: 'integer', description: 'A digit.' } }, required: ['number'] } },
  { name: 'hint', description: 'Ask whether the number is even.', parameters: { type: 'object', properties: {} } },
];

export const VAULT_INSTRUCTION = 'A vault holds a digit. Find it with the tools.';

/** The vault of task `index`, and every step it took (shared across instances of one spec). */
export function vaultSpec(steps: string[] = []): EnvironmentSpec {
  return {
    name: 'vault',
    description: 'guess a digit with tools (tests)',
    create: (): Environment => {
      let secret = 0;
      return {
        name: 'vault',
        instruction: () => VAULT_INSTRUCTION,
        reset: (index) => {
          secret = index % 10;
          return { text: 'The vault is locked.' };
        },
        step: (actionText): StepResult => {
          steps.push(actionText);
          const parsed = parseToolCallText(actionText);
          if (!parsed.ok) return { observation: { text: parsed.message }, reward: 0, done: false, info: { invalid: true } };
          if (parsed.call.name === 'hint') return { observation: { text: secret % 2 === 0 ? 'Even.' : 'Odd.' }, reward: 0, done: false };
          const guess = parsed.call.arguments.number;
          if (guess === secret) return { observation: { text: 'Open!' }, reward: 1, done: true, success: true };
          return { observation: { text: `Not ${String(guess)}.` }, reward: 0, done: false };
        },
        close: () => {},
        tools: () => VAULT_TOOLS,
      };
    },
    catalog: () => ({ indices: () => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }),
    corpus: () => [VAULT_INSTRUCTION],
  };
}
