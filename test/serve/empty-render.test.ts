import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatTemplate, HfTokenizer } from '../../src/models/chat/index.js';
import { templatePrompts } from '../../src/serve/chat-prompts.js';
import { ApiError } from '../../src/serve/openai-errors.js';

const tokenizer = HfTokenizer.fromJSON(JSON.parse(readFileSync(join(import.meta.dirname, '..', 'models', 'chat', 'fixtures', 'smollm2', 'tokenizer.json'), 'utf8')));

describe('a chat template that renders the messages as empty text', () => {
  it('is a 400 on messages (nothing to complete), not a 500', () => {
    const prompts = templatePrompts(new ChatTemplate('{% if false %}{{ messages }}{% endif %}'), tokenizer, { constrainToListedActions: false, builder: 'no builder' });
    let caught: unknown;
    try {
      prompts.prompt([{ role: 'user', content: 'hi' }] as Parameters<typeof prompts.prompt>[0]);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).status).toBe(400);
    expect((caught as ApiError).body().error).toMatchObject({ param: 'messages', code: 'invalid_value', message: expect.stringMatching(/renders these messages as empty text/) });
  });
});
