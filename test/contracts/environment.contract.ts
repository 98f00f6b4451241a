/**
 * The Environment conformance suite: every environment implementation must pass it.
 * Generic behaviour only (text in, text out; no crash on bad text; determinism; idempotent close).
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/rng.js';
import { toolCallText } from '../../src/core/tools.js';
import type { StepResult } from '../../src/core/types.js';
import { randomToolCall } from '../../scripts/standin/transcripts.js';
import type { Environment } from '../../src/envs/environment.js';

/** Options for {@link runEnvironmentContract}. */
export interface EnvironmentContractOptions {
  /** Upper bound on steps when driving an episode to its end with available actions. */
  readonly maxSteps?: number;
}

async function stepThrough(env: Environment, text: string): Promise<StepResult> {
  return await env.step(text);
}

/**
 * Registers the contract tests for an environment.
 * @example runEnvironmentContract('babyai', () => new BabyAIEnvironment(), [0, 1, 41]);
 */
export function runEnvironmentContract(name: string, makeEnv: () => Environment, sampleTaskIndices: number[], options: EnvironmentContractOptions = {}): void {
  const maxSteps = options.maxSteps ?? 200;
  describe(`Environment contract: ${name}`, () => {
    it('has a name and a non-empty instruction', () => {
      const env = makeEnv();
      expect(env.name).toBe(name);
      expect(env.instruction().trim().length).toBeGreaterThan(0);
    });

    it('returns a text observation from reset for every sample task', async () => {
      const env = makeEnv();
      for (const index of sampleTaskIndices) {
        const obs = await env.reset(index);
        expect(typeof obs.text).toBe('string');
        expect(obs.text.trim().length).toBeGreaterThan(0);
        if (obs.availableActions !== undefined) {
          expect(obs.availableActions.every((a) => typeof a === 'string' && a.length > 0)).toBe(true);
        }
      }
      await env.close();
    });

    it('resets deterministically: same index, same first observation', async () => {
      const a = makeEnv();
      const b = makeEnv();
      for (const index of sampleTaskIndices) {
        const first = await a.reset(index);
        await a.reset(sampleTaskIndices[0] as number);
        const again = await a.reset(index);
        const other = await b.reset(index);
        expect(again).toEqual(first);
        expect(other).toEqual(first);
      }
    });

    it('answers garbage text with an observation flagged invalid, without throwing', async () => {
      const env = makeEnv();
      await env.reset(sampleTaskIndices[0] as number);
      for (const garbage of ['', '   ', 'xyzzy plugh', '\u0000\u0001{}[]', 'Action: a\nAction: b', 'Thought: only thinking']) {
        const result = await stepThrough(env, garbage);
        expect(typeof result.observation.text).toBe('string');
        expect(result.observation.text.length).toBeGreaterThan(0);
        expect(result.info?.invalid).toBe(true);
        expect(result.done).toBe(false);
        expect(result.reward).toBe(0);
      }
    });

    it('accepts an available action in both Thought/Action form and bare form', async () => {
      const env = makeEnv();
      const obs = await env.reset(sampleTaskIndices[0] as number);
      const action = obs.availableActions?.[0];
      if (action === undefined) return; // environments without an action list have nothing generic to send
      const wrapped = await stepThrough(env, `Thought:\nLet me try.\n\nAction:\n${action}`);
      expect(wrapped.info?.invalid).not.toBe(true);
      await env.reset(sampleTaskIndices[0] as number);
      const bare = await stepThrough(env, action);
      expect(bare.info?.invalid).not.toBe(true);
      expect(bare.observation.text).toBe(wrapped.observation.text);
    });

    it('returns finite rewards and reports success only on done steps', async () => {
      const env = makeEnv();
      for (const index of sampleTaskIndices) {
        let obs = await env.reset(index);
        for (let t = 0; t < maxSteps; t++) {
          const actions = obs.availableActions ?? ['noop'];
          const result = await stepThrough(env, actions[(t * 7 + index) % actions.length] as string);
          expect(Number.isFinite(result.reward)).toBe(true);
          if (result.success === true) expect(result.done).toBe(true);
          obs = result.observation;
          if (result.done) break;
        }
      }
    });

    it('keeps a finished episode finished: further steps stay done, earn nothing and do not throw', async () => {
      const env = makeEnv();
      let finished = false;
      for (const index of sampleTaskIndices) {
        let obs = await env.reset(index);
        for (let t = 0; t < maxSteps && !finished; t++) {
          const actions = obs.availableActions ?? ['noop'];
          const result = await stepThrough(env, actions[(t * 5 + 3) % actions.length] as string);
          obs = result.observation;
          finished = result.done;
        }
        if (finished) break;
      }
      expect(finished).toBe(true);
      const after = await stepThrough(env, 'turn left');
      expect(after.done).toBe(true);
      expect(after.reward).toBe(0);
      expect(after.success).not.toBe(true);
    });

    it('closes idempotently', async () => {
      const env = makeEnv();
      await env.reset(sampleTaskIndices[0] as number);
      await env.close();
      await env.close();
    });

    it('when it declares tools: function declarations it reads as canonical call text, an undeclared tool flagged invalid', async () => {
      const env = makeEnv();
      const tools = env.tools?.() ?? [];
      if (tools.length === 0) return;
      for (const tool of tools) {
        expect(tool.name).toMatch(/^[A-Za-z0-9_.-]{1,64}$/);
        expect(tool.description.length).toBeGreaterThan(0);
        expect(tool.parameters.type).toBe('object');
        for (const name of tool.parameters.required ?? []) expect(tool.parameters.properties).toHaveProperty(name);
      }
      const rng = Rng.fromSeed(11);
      for (const index of sampleTaskIndices) {
        let observation = await env.reset(index);
        for (let turn = 0; turn < 3; turn++) {
          const result = await stepThrough(env, toolCallText(randomToolCall(rng, tools, observation)));
          expect(Number.isFinite(result.reward)).toBe(true);
          expect(result.observation.text.length).toBeGreaterThan(0);
          if (result.done) break;
          observation = result.observation;
        }
      }
      await env.reset(sampleTaskIndices[0] as number);
      const undeclared = await stepThrough(env, toolCallText({ name: 'no_such_tool', arguments: {} }));
      expect(undeclared.info?.invalid).toBe(true);
      expect(undeclared.done).toBe(false);
      expect(undeclared.reward).toBe(0);
    });

    it('renders a non-empty text when it offers render()', async () => {
      const env = makeEnv();
      if (env.render === undefined) return;
      await env.reset(sampleTaskIndices[0] as number);
      expect(env.render().length).toBeGreaterThan(0);
    });
  });
}
