import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildContext } from '../../src/models/context.js';
import { type ChatTextOptions, chatText, policyTextFromManifest, turnwiseText } from '../../src/models/policy-text.js';
import { trainBpe } from '../../src/models/tokenizer/index.js';

const FIXTURE = join(import.meta.dirname, 'chat', 'fixtures', 'smollm2');
const json = (file: string): unknown => JSON.parse(readFileSync(join(FIXTURE, file), 'utf8'));
const contents = { tokenizerJson: json('tokenizer.json'), tokenizerConfig: json('tokenizer_config.json'), generationConfig: json('generation_config.json'), config: json('config.json') };
const CHAT: ChatTextOptions = { system: null, acknowledge: "OK. I'll follow your instructions and try my best to solve the task.", history: 'full', maxContext: 4096, maxResponseTokens: 400 };

describe('chatText', () => {
  const text = chatText(contents, CHAT);
  const instruction = 'Go to the red ball.';
  const reply = (s: string) => text.actionChoices([s])[0] as Int32Array; // canonical ids + <|im_end|>

  it('builds contexts that extend turn by turn with the sampled ids (token-in, token-out)', () => {
    const first = text.context({ instruction, pastTurns: [], observationText: 'You see a wall.' });
    const a0 = reply('Thought: turn.\nAction: turn left');
    const second = text.context({ instruction, pastTurns: [{ observationText: 'You see a wall.', actionTokens: a0 }], observationText: 'You see a ball.' });
    expect(Array.from(second.subarray(0, first.length + a0.length))).toEqual([...first, ...a0]);
    expect(text.actionText(a0)).toBe('Thought: turn.\nAction: turn left');
    expect(text.stopTokenIds).toContain(text.endTokenId);
    expect(text.tokenIds.eos).toContain(text.endTokenId);
  });

  it('counts the reply budget down from maxResponseTokens and the model context, to zero', () => {
    const turns: { observationText: string; actionTokens: Int32Array }[] = [];
    const budgets: number[] = [];
    for (let k = 0; k < 40; k++) {
      const input = { instruction, pastTurns: turns, observationText: `observation number ${k}` };
      const budget = text.replyBudget(input, text.context(input));
      budgets.push(budget);
      if (budget === 0) break;
      turns.push({ observationText: input.observationText, actionTokens: reply('Thought: keep going.\nAction: move forward') });
    }
    expect(budgets[0]).toBe(400); // nothing after the first prompt yet
    expect(budgets.at(-1)).toBe(0);
    for (let i = 1; i < budgets.length; i++) expect(budgets[i]).toBeLessThan(budgets[i - 1] as number);
    const small = chatText(contents, { ...CHAT, maxContext: 64, maxResponseTokens: 10_000 });
    const input = { instruction, pastTurns: [], observationText: 'x' };
    expect(small.replyBudget(input, small.context(input))).toBe(Math.max(0, 64 - small.context(input).length));
  });

  it('keeps only the last k turns when history is a count', () => {
    const k1 = chatText(contents, { ...CHAT, history: 1 });
    const pastTurns = [
      { observationText: 'first', actionTokens: reply('Action: a') },
      { observationText: 'second', actionTokens: reply('Action: b') },
    ];
    expect(Array.from(k1.context({ instruction, pastTurns, observationText: 'third' }))).toEqual(Array.from(text.context({ instruction, pastTurns: pastTurns.slice(1), observationText: 'third' })));
  });

  it('exports the folder\'s own tokenizer files and rebuilds from its manifest', () => {
    const names = text.files({ modelMaxLength: 4096, maxNewTokens: 64 }).map((f) => f.name);
    expect(names).toEqual(['tokenizer.json', 'tokenizer_config.json', 'generation_config.json']);
    const again = policyTextFromManifest(JSON.parse(JSON.stringify(text.manifest())));
    const input = { instruction, pastTurns: [{ observationText: 'o', actionTokens: reply('Action: go') }], observationText: 'p' };
    expect(Array.from(again.context(input))).toEqual(Array.from(text.context(input)));
  });

  it('refuses a model folder without a chat template, naming the fix', () => {
    const { chat_template: _t, ...bare } = contents.tokenizerConfig as Record<string, unknown>;
    expect(() => chatText({ ...contents, tokenizerConfig: bare }, CHAT, 'models/base')).toThrow(/models\/base has no chat template.*instruct model/);
  });
});

describe('turnwiseText', () => {
  const tokenizer = trainBpe(['Your goal: go to the red ball', 'turn left', 'turn right', 'There is a red ball 1 2 steps in front of you'], { vocabSize: 300 });
  const policy = { history: 'full' as const, includeInstruction: true, maxContextTokens: 200 };
  const text = turnwiseText(tokenizer, policy);

  it('lays contexts out as buildContext does, with no token budget', () => {
    const input = { instruction: 'Your goal: go to the red ball', pastTurns: [{ observationText: 'a wall', actionTokens: text.actionChoices(['turn left'])[0] as Int32Array }], observationText: 'a ball' };
    expect(Array.from(text.context(input))).toEqual(Array.from(buildContext(tokenizer, input, policy)));
    expect(text.replyBudget(input, text.context(input))).toBe(Number.POSITIVE_INFINITY);
    expect(text.stopTokenIds).toEqual([tokenizer.specialId('end')]);
  });

  it('exports a tokenizer_config.json whose chat template ends replies with <|end|>', () => {
    const files = text.files({ modelMaxLength: 256, maxNewTokens: 24 });
    const config = JSON.parse(files.find((f) => f.name === 'tokenizer_config.json')?.data ?? '{}');
    const generation = JSON.parse(files.find((f) => f.name === 'generation_config.json')?.data ?? '{}');
    expect(config.chat_template).toContain('<|end|>');
    expect(config.eos_token).toBe('<|end|>');
    expect(generation).toMatchObject({ eos_token_id: tokenizer.specialId('end'), bos_token_id: tokenizer.specialId('bos'), pad_token_id: tokenizer.specialId('pad') });
  });
});
