import { describe, expect, it } from 'vitest';
import { ChatTemplateError } from '../../../src/models/chat/errors.js';
import { loadChatModelFiles } from '../../../src/models/chat/model-files.js';
import { strftime } from '../../../src/models/chat/strftime.js';
import { ChatTemplate } from '../../../src/models/chat/template.js';
import { CHAT_FAMILIES, fixtureDir, reference } from './fixtures.js';

const kwargsOf = (family: string): Record<string, unknown> => (family === 'llama3' ? { date_string: '26 Jul 2024' } : {});

describe.each(CHAT_FAMILIES)('ChatTemplate of the %s fixture', (family) => {
  const ref = reference(family);

  it('renders every conversation prefix to the text transformers renders, and tokenizes it to the same ids', async () => {
    const { template, tokenizer } = await loadChatModelFiles(fixtureDir(family));
    if (template === undefined) throw new Error('fixture has no template');
    let checked = 0;
    for (const chat of ref.chats ?? []) {
      for (const r of chat.renders) {
        const text = template.render(chat.messages.slice(0, r.messages), { addGenerationPrompt: r.add_generation_prompt, kwargs: kwargsOf(family) });
        expect(text, `${chat.name}, ${r.messages} messages`).toBe(r.text);
        expect([...tokenizer.encode(text)]).toEqual(r.ids);
        checked++;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(4 * 6);
  });

  it('passes the special tokens transformers passes (special_tokens_map)', async () => {
    const { template } = await loadChatModelFiles(fixtureDir(family));
    expect(template?.specialTokens).toEqual(ref.special_tokens_map);
  });
});

describe('ChatTemplate globals and kwargs', () => {
  it('dates strftime_now from the injected clock, in the C locale', async () => {
    const now = () => new Date(2025, 0, 5, 12, 0, 0);
    const { template } = await loadChatModelFiles(fixtureDir('llama3'), { now });
    const text = template?.render([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }) ?? '';
    expect(text).toContain('Today Date: 05 Jan 2025\n\n');
    expect(strftime(new Date(2024, 6, 26, 15, 4, 9), '%a %A %b %B %d %e %H %I %j %m %M %p %S %y %Y %%')).toBe('Fri Friday Jul July 26 26 15 03 208 07 04 PM 09 24 2024 %');
  });

  it('passes extra kwargs (Qwen3 enable_thinking=false adds an empty think block)', async () => {
    const ref = reference('qwen3');
    const { template } = await loadChatModelFiles(fixtureDir('qwen3'));
    const noThinking = ref.no_thinking;
    if (noThinking === undefined || template === undefined) throw new Error('fixture incomplete');
    expect(template.render(noThinking.messages, { addGenerationPrompt: true, kwargs: { enable_thinking: false } })).toBe(noThinking.text);
    expect(noThinking.text.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
  });

  it.each(['mistral', 'llama2'] as const)('turns raise_exception of %s into ChatTemplateError with the message transformers raises', async (family) => {
    const { template } = await loadChatModelFiles(fixtureDir(family));
    const expected = reference(family).alternation_error;
    expect(expected).toMatch(/alternate/);
    const render = () => template?.render([{ role: 'user', content: 'a' }, { role: 'user', content: 'b' }]);
    expect(render).toThrow(ChatTemplateError);
    expect(render).toThrow(`raised: ${expected}`);
  });

  it('names the template in parse and render errors', () => {
    expect(() => new ChatTemplate('{% for %}', { origin: 'x/chat_template.jinja' })).toThrow(/x\/chat_template\.jinja/);
    const broken = new ChatTemplate('{{ messages[0].content.nope() }}', { origin: 'cfg:chat_template' });
    expect(() => broken.render([{ role: 'user', content: 'a' }])).toThrow(/cfg:chat_template.*failed to render/);
  });

  it('passes only the special tokens that are set, and lets kwargs override them', () => {
    const template = new ChatTemplate('{{ bos_token is defined }}|{{ eos_token }}', { specialTokens: { bos_token: null, eos_token: '</s>' } });
    // transformers 5.18 writes Python's False.
    expect(template.render([])).toBe('False|</s>');
    expect(template.render([], { kwargs: { eos_token: '<e>' } })).toBe('False|<e>');
  });
});
