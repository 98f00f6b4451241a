import { describe, expect, it } from 'vitest';
import { loadChatModelFiles } from '../../../src/models/chat/model-files.js';
import type { TemplateTool } from '../../../src/models/chat/template.js';
import { fixtureDir, TOOL_FAMILIES, toolChats } from './fixtures.js';

const kwargsOf = (family: string): Record<string, unknown> => (family === 'llama3' ? { date_string: '26 Jul 2024' } : {});

describe.each(TOOL_FAMILIES)('the %s template with tools', (family) => {
  it('renders every turn of the recorded tool conversations as transformers does', async () => {
    const files = await loadChatModelFiles(fixtureDir(family));
    const template = files.template;
    if (template === undefined) throw new Error(`${family} has no template`);
    for (const chat of toolChats(family)) {
      for (const r of chat.renders) {
        const text = template.render(chat.messages.slice(0, r.messages), {
          addGenerationPrompt: r.add_generation_prompt,
          tools: chat.tools as unknown as TemplateTool[],
          kwargs: kwargsOf(family),
        });
        expect(text, `${chat.name}, ${r.messages} messages`).toBe(r.text);
      }
    }
  });
});
