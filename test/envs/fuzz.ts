/**
 * Parser fuzzing shared by the grid and word environment tests: random byte strings, random
 * printable strings and hand-made malformed replies must never throw, and every reply is either a
 * valid action or an observation flagged invalid.
 */
import { expect } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import type { StepResult } from '../../src/core/types.js';
import type { Environment } from '../../src/envs/environment.js';

export const MALFORMED: readonly string[] = [
  '', ' ', '\n\n', 'Action:', 'Action:\n', 'Action: \u0000', 'Thought: hmm', 'Action: up\nAction: down', 'Action: move move up',
  'ACTION: UP', '🙂🙂🙂', '<think>up</think>', 'Thought:\nAction:\n\nAction:', 'x'.repeat(5000), 'Action: c r a n', 'Action: 12345', '\\u0000\\n',
];

/** Sends `count` random strings plus the malformed list after `reset(task)`; asserts no throw and a well-formed result. */
export function fuzzEnvironment(env: Environment, task: number, count = 300, seed = 1): void {
  const rng = Rng.fromSeed(seed);
  const alphabet = 'abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ:\n\t0123456789,.!?-_#√';
  const inputs = [...MALFORMED];
  for (let i = 0; i < count; i++) {
    const length = rng.int(40);
    let text = '';
    for (let k = 0; k < length; k++) text += rng.next() < 0.1 ? String.fromCharCode(rng.int(0xffff)) : alphabet[rng.int(alphabet.length)];
    if (rng.next() < 0.3) text = `Action: ${text}`;
    inputs.push(text);
  }
  env.reset(task);
  for (const text of inputs) {
    let result: StepResult | undefined;
    expect(() => {
      result = env.step(text) as StepResult;
    }).not.toThrow();
    const r = result as StepResult;
    expect(typeof r.observation.text).toBe('string');
    expect(r.observation.text.length).toBeGreaterThan(0);
    expect(Number.isFinite(r.reward)).toBe(true);
    if (r.done) env.reset(task);
  }
}
