/**
 * Rollouts that act through tools (`context.actions: tools`), on the token path: contexts carry the
 * environment's tools and answer each call with a tool message, a call reaches the environment as
 * its canonical text, and a reply that is no valid call is an invalid action whose observation is
 * the error — the environment is not stepped.
 */
import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import { withSamplerEffects } from '../../src/actors/sampler.js';
import { systemClock } from '../../src/core/clock.js';
import { InvalidConfigError } from '../../src/core/errors.js';
import type { ActRequest, ActResult } from '../../src/core/policy.js';
import { loadChatModelFiles, readChatModelFileContents } from '../../src/models/chat/model-files.js';
import { ToolChatBuilder } from '../../src/models/chat/tool-chat.js';
import { chatText } from '../../src/models/policy-text.js';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { type EpisodePlan, RolloutRunner } from '../../src/runtime/rollout.js';
import { rolloutMetrics } from '../../src/runtime/rollout-metrics.js';
import { serveSampler } from '../../src/runtime/wiring/sampler.js';
import { fixtureDir } from '../models/chat/fixtures.js';
import { VAULT_INSTRUCTION, VAULT_TOOLS, vaultSpec } from '../helpers/vault-env.js';

const ACK = "OK. I'll follow your instructions and try my best to solve the task.";
const CHAT_OPTIONS = { system: null, acknowledge: ACK, history: 'full' as const, maxContext: 1_000_000, maxResponseTokens: 1_000_000 };

async function qwen() {
  const folder = fixtureDir('qwen2.5');
  const files = await loadChatModelFiles(folder);
  const text = chatText(await readChatModelFileContents(folder), CHAT_OPTIONS, folder);
  if (files.template === undefined) throw new Error('no template');
  const tools = ToolChatBuilder.create(files.template, files.tokenizer, { layout: { acknowledgement: ACK }, stopTokenIds: files.stopTokenIds, tools: VAULT_TOOLS });
  return { files, text, tools };
}

/** A sampler whose replies are scripted per turn of each episode. */
function scriptedSampler(bus: MemoryBus, runId: string, replies: readonly Int32Array[]) {
  const seen: ActRequest[] = [];
  const sampler = createActor(
    withSamplerEffects({
      generate: async (requests) =>
        requests.map((request): ActResult => {
          seen.push(request);
          const turn = seen.filter((r) => r.episodeId === request.episodeId).length - 1;
          const tokens = replies[turn] as Int32Array;
          return { tokens, logprobs: new Float32Array(tokens.length), lossMask: new Uint8Array(tokens.length).fill(1), constraint: null, policyVersion: 0 };
        }),
      loadWeights: async () => {},
      release: () => {},
    }),
    { input: { maxBatch: 4, maxWaitMs: 1 }, clock: systemClock },
  ).start();
  const served = serveSampler(bus, runId, sampler);
  const stop = () => {
    served.close();
    sampler.stop();
  };
  return { seen, stop };
}

const plan = (index: number): EpisodePlan => ({ taskId: `vault_${index}`, taskIndex: index, groupId: 'g', trajectoryId: `e${index}`, seed: index });

describe('RolloutRunner with context.actions: tools', () => {
  it('steps the environment with valid calls only and answers every other reply with its error', async () => {
    const { files, text, tools } = await qwen();
    const end = tools.endOfTurnId;
    const withEnd = (body: string) => Int32Array.from([...files.tokenizer.encode(body), end]);
    const replies = [
      tools.encodeToolReply([{ name: 'hint', arguments: {}, id: 'unused000' }], 'Let me ask first.'),
      withEnd('<tool_call>\n{"name": "guess", "arguments": {"number": }}\n</tool_call>'),
      withEnd('I think it is 7.'),
      tools.encodeToolReply([{ name: 'open', arguments: {}, id: 'unused000' }]),
      withEnd('<tool_call>\n{"name": "guess", "arguments": {"number": 1}}\n</tool_call>\n<tool_call>\n{"name": "hint", "arguments": {}}\n</tool_call>'),
      tools.encodeToolReply([{ name: 'guess', arguments: { number: 7 }, id: 'unused000' }]),
    ];
    const bus = new MemoryBus({ clock: systemClock });
    const sampler = scriptedSampler(bus, 'tools-run', replies);
    const steps: string[] = [];
    const runner = new RolloutRunner({
      bus,
      runId: 'tools-run',
      spec: vaultSpec(steps),
      envSettings: {},
      poolSize: 1,
      text,
      constrained: true,
      envTimeoutMs: 30_000,
      actTimeoutMs: 30_000,
      clock: systemClock,
    });
    expect(runner.actionMode).toBe('tools');
    const [trajectory] = await runner.run(0, 10, [plan(7)]);
    await bus.drain();

    expect(trajectory.outcome).toBe('success');
    // Only the two valid calls reached the environment, as their canonical text.
    expect(steps).toEqual(['{"name":"hint","arguments":{}}', '{"name":"guess","arguments":{"number":7}}']);
    expect(trajectory.turns.map((t) => t.invalidAction)).toEqual([false, true, true, true, true, false]);
    expect(trajectory.turns.map((t) => t.observationText).slice(1)).toEqual([
      'Odd.',
      expect.stringMatching(/^The tool call is not valid JSON .* Call one of the tools: guess, hint\.$/),
      'Your reply calls no tool. Call one of the tools: guess, hint.',
      'There is no tool "open"; the tools are "guess", "hint".',
      'Call one tool per turn; this reply makes 2 calls.',
    ]);
    expect(rolloutMetrics([trajectory], 1)['rollout/invalidActionRate']).toBeCloseTo(4 / 6);

    // Each turn's context is the tool layout built from the sampled ids: the first call is answered
    // by a tool message, the unreadable replies by user messages.
    for (const [k, request] of sampler.seen.entries()) {
      const pastTurns = trajectory.turns.slice(0, k).map((t) => ({ observationText: t.observationText, actionTokens: t.actionTokens }));
      const expected = tools.context({ instruction: VAULT_INSTRUCTION, pastTurns, observationText: trajectory.turns[k]?.observationText ?? '' });
      expect([...request.contextTokens], `turn ${k}`).toEqual([...expected]);
      expect(request.actionChoices).toBeNull();
    }
    const second = files.tokenizer.decode(sampler.seen[1]?.contextTokens ?? []);
    expect(second).toContain('<tools>\n{"type": "function", "function": {"name": "guess"');
    expect(second.endsWith('<|im_start|>user\n<tool_response>\nOdd.\n</tool_response><|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    const third = files.tokenizer.decode(sampler.seen[2]?.contextTokens ?? []);
    expect(third).toMatch(/<\|im_start\|>user\nThe tool call is not valid JSON[^<]*<\|im_end\|>\n<\|im_start\|>assistant\n$/);

    await runner.close();
    sampler.stop();
    await bus.close();
  });

  it("acts as before under 'text' and refuses 'tools' where the environment declares none", async () => {
    const { text } = await qwen();
    const bus = new MemoryBus({ clock: systemClock });
    const base = { bus, runId: 'r', envSettings: {}, poolSize: 1, text, constrained: false, envTimeoutMs: 1000, actTimeoutMs: 1000, clock: systemClock };
    const asText = new RolloutRunner({ ...base, spec: vaultSpec(), actions: 'text' });
    expect(asText.actionMode).toBe('text');
    await asText.close();
    const noTools = { ...vaultSpec(), create: () => ({ ...vaultSpec().create(), tools: undefined }) };
    const fallback = new RolloutRunner({ ...base, spec: noTools });
    expect(fallback.actionMode).toBe('text');
    await fallback.close();
    expect(() => new RolloutRunner({ ...base, spec: noTools, actions: 'tools' })).toThrow(InvalidConfigError);
    expect(() => new RolloutRunner({ ...base, spec: noTools, actions: 'tools' })).toThrow(/context\.actions.*vault declares none/);
    await bus.close();
  });
});
