import { describe, expect, it } from 'vitest';
import { Rng } from '../../../src/core/rng.js';
import { BabyAIEnvironment } from '../../../src/envs/babyai/env.js';

const WORDS = ['go', 'to', 'pickup', 'pick', 'up', 'toggle', 'and', 'through', 'red', 'ball', 'door', 'closed', 'locked', '1', '2', '99', 'drop', 'turn', 'left', 'move', 'forward', 'Action:', 'Thought:', 'check', 'available', 'actions'];
const JUNK = ['', ' ', '\n', 'Action:', 'Action:\nAction:', 'Action: go to\nAction: drop', '\u0000', '🙂', 'ACTION: TURN LEFT', 'Thought: hmm', '{"action": "drop"}', 'go to red ball -1', 'go to red ball 1e9', 'a'.repeat(5000)];

/** A random string: words, junk, valid actions with mutations, or raw bytes. */
function randomAction(rng: Rng, valid: readonly string[]): string {
  const r = rng.next();
  if (r < 0.25 && valid.length > 0) {
    const a = rng.pick(valid);
    const cut = rng.int(a.length + 1);
    return rng.next() < 0.5 ? a.slice(0, cut) : `${a}${rng.pick([' 7', 's', '!', ' please'])}`;
  }
  if (r < 0.5) return Array.from({ length: 1 + rng.int(6) }, () => rng.pick(WORDS)).join(' ');
  if (r < 0.65) return rng.pick(JUNK);
  if (r < 0.8) return `Thought:\n${rng.pick(WORDS)}\n\nAction:\n${rng.pick(valid.length > 0 ? valid : WORDS)}`;
  return String.fromCharCode(...Array.from({ length: rng.int(40) }, () => rng.int(0x3000)));
}

describe('BabyAI parser fuzz', () => {
  it('answers 3000 random and malformed actions over many levels without throwing, always with a clear observation', () => {
    const rng = Rng.fromSeed(5).fork('fuzz');
    const env = new BabyAIEnvironment();
    let obs = env.reset(0);
    let invalid = 0;
    for (let i = 0; i < 3000; i++) {
      if (i % 25 === 0) obs = env.reset(rng.int(40 * 50));
      const action = randomAction(rng, obs.availableActions ?? []);
      const r = env.step(action);
      expect(typeof r.observation.text).toBe('string');
      expect(r.observation.text.length).toBeGreaterThan(0);
      expect(Number.isFinite(r.reward)).toBe(true);
      if (r.info?.invalid === true) {
        invalid++;
        // Unusable input names what went wrong and how to recover.
        expect(r.observation.text).toMatch(/not recognized|cannot|Only one|no action|empty|There is|episode is over|barrier|characters long; the limit is/i);
        expect(r.reward).toBe(0);
      }
      obs = r.observation;
      if (r.done) obs = env.reset(rng.int(40 * 50));
    }
    expect(invalid).toBeGreaterThan(1000);
  });
});
