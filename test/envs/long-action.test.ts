/**
 * No environment echoes a huge invalid action back in full: a 1 MB reply gets a short refusal, in
 * the observation and in the step's info alike (each built-in environment, bare and in
 * `Thought: ... Action: ...` form).
 */
import { describe, expect, it } from 'vitest';
import '../../src/envs/index.js';
import { MAX_ACTION_CHARS, parseAction } from '../../src/envs/parse-action.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';

const HUGE = `go to ${'x'.repeat(1_000_000)}`;
const BOUND = 4 * MAX_ACTION_CHARS;

describe('a huge action', () => {
  it('parseAction refuses it as too long, naming its length and the limit', () => {
    const parsed = parseAction(`Action: ${HUGE}`);
    expect(parsed).toMatchObject({ ok: false, reason: 'too-long' });
    expect(parsed.ok ? '' : parsed.message).toMatch(/1000006 characters long; the limit is 1000/);
    expect(parseAction(`go to ${'x'.repeat(MAX_ACTION_CHARS - 6)}`).ok).toBe(true);
  });

  const cases: Array<[string, Record<string, unknown>]> = [
    ['babyai', {}],
    ['babyai', { textProfile: 'agentgym', generator: 'minigrid' }],
    ...['textcraft', 'maze', 'wordle', 'sokoban', 'frozenlake', 'sql', 'deepsearch'].map((n): [string, Record<string, unknown>] => [n, {}]),
  ];
  for (const [name, settings] of cases) {
    it(`${name} ${JSON.stringify(settings)} answers it with a bounded observation and info`, async () => {
      const env = getEnvironmentSpec(name).create({ settings });
      try {
        await env.reset(0);
        for (const text of [HUGE, `Action: ${HUGE}`, `Thought: x\nAction: ${HUGE}`]) {
          const result = await env.step(text);
          expect(result.observation.text.length).toBeLessThan(BOUND);
          expect(JSON.stringify(result.info ?? {}).length).toBeLessThan(BOUND);
          expect(result.done).toBe(false);
        }
      } finally {
        await env.close?.();
      }
    }, 30_000);
  }
});
