/**
 * The render budget against real and runaway templates: a real chat template (Qwen2.5's, from the
 * fixtures) on a long conversation fits in a fiftieth of the default budget, and each runaway is
 * refused by the limit it hits, naming the template's origin.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatTemplate, ChatTemplateBudgetError, type ChatMessage, DEFAULT_RENDER_BUDGET } from '../../../src/models/chat/index.js';

const qwen = JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'qwen2.5', 'tokenizer_config.json'), 'utf8')) as { chat_template: string };
const conversation: ChatMessage[] = [{ role: 'system', content: 'You are an agent.' }];
for (let i = 0; i < 40; i++) {
  conversation.push({ role: 'user', content: 'Observation: you see a red ball to the left. '.repeat(10) });
  conversation.push({ role: 'assistant', content: 'Thought: go. Action: turn left' });
}

function refusal(source: string): ChatTemplateBudgetError {
  try {
    new ChatTemplate(source, { origin: 'm/chat_template.jinja' }).render(conversation);
  } catch (error) {
    expect(error).toBeInstanceOf(ChatTemplateBudgetError);
    return error as ChatTemplateBudgetError;
  }
  throw new Error('expected the template to be refused');
}

describe('the chat template render budget', () => {
  it("renders Qwen2.5's template on 81 messages within a fiftieth of the default budget, and not within 1,000 steps", () => {
    const small = { ...DEFAULT_RENDER_BUDGET, maxSteps: DEFAULT_RENDER_BUDGET.maxSteps / 50 };
    const text = new ChatTemplate(qwen.chat_template, { budget: small }).render(conversation, { addGenerationPrompt: true });
    expect(text.endsWith('<|im_start|>assistant\n')).toBe(true);
    expect(() => new ChatTemplate(qwen.chat_template, { budget: { ...small, maxSteps: 1000 } }).render(conversation)).toThrow(/more than 1,000 evaluation steps/);
  });

  it('refuses range(10^9) before building it', () => {
    expect(refusal('{% for i in range(1000000000) %}x{% endfor %}').message).toMatch(/^chat template 'm\/chat_template\.jinja': refused: .*range\(\) of 1,000,000,000 items \(limit 100,000\)/);
  });

  it('refuses a string doubled past the size limit', () => {
    expect(refusal("{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}").message).toMatch(/a string of 8,388,608 characters \(limit 4,194,304\)/);
  });

  it('refuses loops nested past the step budget (deterministic with the time limit out of the way)', () => {
    const source = '{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}';
    let caught: unknown;
    try {
      new ChatTemplate(source, { origin: 'm', budget: { ...DEFAULT_RENDER_BUDGET, maxSteps: 50_000, deadlineMs: 60_000 } }).render(conversation);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ChatTemplateBudgetError);
    expect((caught as Error).message).toMatch(/more than 50,000 evaluation steps/);
  });
});
