import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelFilesError } from '../../../src/models/chat/errors.js';
import { loadChatModelFiles, parseChatModelFiles } from '../../../src/models/chat/model-files.js';
import { type Family, fixtureDir, readFixtureJson } from './fixtures.js';

const contents = (family: Family) => ({
  tokenizerJson: readFixtureJson(family, 'tokenizer.json'),
  tokenizerConfig: readFixtureJson<Record<string, unknown>>(family, 'tokenizer_config.json'),
  generationConfig: readFixtureJson<Record<string, unknown>>(family, 'generation_config.json'),
  config: readFixtureJson<Record<string, unknown>>(family, 'config.json'),
});

describe('loadChatModelFiles', () => {
  it('stops at every eos id any file names (Qwen2.5: <|im_end|> and <|endoftext|>; Llama 3: three)', async () => {
    const qwen = await loadChatModelFiles(fixtureDir('qwen2.5'));
    const t = qwen.tokenizer;
    expect(qwen.stopTokenIds).toEqual([t.idOf('<|endoftext|>'), t.idOf('<|im_end|>')]);
    expect(qwen.padTokenId).toBe(t.idOf('<|endoftext|>'));
    expect(qwen.bosTokenId).toBe(t.idOf('<|endoftext|>'));
    expect(qwen.modelMaxLength).toBe(131072);
    const llama = await loadChatModelFiles(fixtureDir('llama3'));
    expect(llama.stopTokenIds).toEqual(['<|end_of_text|>', '<|eom_id|>', '<|eot_id|>'].map((s) => llama.tokenizer.idOf(s)));
    expect(llama.bosTokenId).toBe(llama.tokenizer.idOf('<|begin_of_text|>'));
    expect(llama.padTokenId).toBeUndefined();
  });

  it('reads chat_template.jinja, and prefers it to tokenizer_config.json', async () => {
    const qwen3 = await loadChatModelFiles(fixtureDir('qwen3'));
    expect(qwen3.template?.origin).toMatch(/qwen3\/chat_template\.jinja$/);
    const both = parseChatModelFiles({ ...contents('qwen2.5'), chatTemplateJinja: 'from the file' });
    expect(both.template?.render([])).toBe('from the file');
  });

  it('picks a named template from the list form (default unless asked)', () => {
    const files = parseChatModelFiles(contents('llama2'));
    expect(files.template?.render([{ role: 'user', content: 'hi' }])).toBe('<s>[INST] hi [/INST]');
    const plain = parseChatModelFiles(contents('llama2'), { templateName: 'plain' });
    expect(plain.template?.render([{ role: 'user', content: 'hi' }])).toBe('user: hi\n');
    expect(() => parseChatModelFiles(contents('llama2'), { templateName: 'tool_use' })).toThrow(/no template named 'tool_use' \(has: default, plain\)/);
  });

  it('has no template for a base model folder', () => {
    const files = parseChatModelFiles(contents('gpt2'));
    expect(files.template).toBeUndefined();
    expect(files.stopTokenIds).toEqual([files.tokenizer.idOf('<|endoftext|>')]);
  });

  it('accepts special tokens written as {content} objects', () => {
    const c = contents('mistral');
    const files = parseChatModelFiles({ ...c, tokenizerConfig: { ...c.tokenizerConfig, eos_token: { __type: 'AddedToken', content: '</s>' } } });
    expect(files.specialTokens.eos_token).toBe('</s>');
  });

  describe('names the file and field at fault', () => {
    const c = contents('qwen2.5');
    const cases: [string, () => unknown, RegExp][] = [
      ['an unknown special token', () => parseChatModelFiles({ ...c, tokenizerConfig: { ...c.tokenizerConfig, eos_token: '<|nope|>' } }), /tokenizer_config\.json:eos_token.*not a token/],
      ['added_tokens_decoder disagreeing with tokenizer.json', () => parseChatModelFiles({ ...c, tokenizerConfig: { ...c.tokenizerConfig, added_tokens_decoder: { '3': { content: '<|im_end|>' } } } }), /added_tokens_decoder\.3.*says '<\|im_end\|>'/],
      ['an eos id outside the vocabulary', () => parseChatModelFiles({ ...c, generationConfig: { eos_token_id: [1, 99999] } }), /generation_config\.json:eos_token_id.*99999/],
      ['an eos id of the wrong type', () => parseChatModelFiles({ ...c, config: { eos_token_id: '2' } }), /config\.json:eos_token_id/],
      ['bos ids that disagree', () => parseChatModelFiles({ ...c, generationConfig: { bos_token_id: 1 }, config: { bos_token_id: 2 } }), /generation_config\.json:bos_token_id.*1 disagrees with config\.json:bos_token_id 2/],
      ['a pad id given as a list', () => parseChatModelFiles({ ...c, generationConfig: { pad_token_id: [1, 2] } }), /generation_config\.json:pad_token_id.*one id/],
      ['a malformed chat_template', () => parseChatModelFiles({ ...c, tokenizerConfig: { ...c.tokenizerConfig, chat_template: [{ name: 'x' }] } }), /chat_template\.0/],
      ['a wrong clean_up flag', () => parseChatModelFiles({ ...c, tokenizerConfig: { ...c.tokenizerConfig, clean_up_tokenization_spaces: 'yes' } }), /clean_up_tokenization_spaces/],
    ];
    it.each(cases)('%s', (_name, run, message) => {
      expect(run).toThrow(ModelFilesError);
      expect(run).toThrow(message);
    });
  });

  describe('with broken folders', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'turnwise-model-files-'));
    });
    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('says a folder without tokenizer.json needs one', async () => {
      await expect(loadChatModelFiles(dir)).rejects.toThrow(/tokenizer\.json.*needs tokenizer\.json/);
    });

    it('names a file that is not JSON', async () => {
      await writeFile(join(dir, 'tokenizer.json'), JSON.stringify(readFixtureJson('gpt2', 'tokenizer.json')));
      await writeFile(join(dir, 'generation_config.json'), '{ nope');
      await expect(loadChatModelFiles(dir)).rejects.toThrow(/generation_config\.json.*not valid JSON/);
    });
  });
});
