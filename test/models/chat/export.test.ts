import { describe, expect, it } from 'vitest';
import { ChatContextBuilder } from '../../../src/models/chat/context-builder.js';
import { generationConfigJson, tokenizerConfigJson } from '../../../src/models/chat/export.js';
import { parseChatModelFiles } from '../../../src/models/chat/model-files.js';
import { TURNWISE_CHAT_TEMPLATE, turnwiseChatFiles } from '../../../src/models/chat/turnwise-template.js';
import { buildContext, encodeActionChoices } from '../../../src/models/context.js';
import { HfTokenizer } from '../../../src/models/tokenizer/hf-tokenizer.js';
import { trainBpe } from '../../../src/models/tokenizer/train.js';
import { babyAiCorpus, SAMPLE_OBSERVATION } from '../tokenizer/babyai-corpus.js';
import { readFixtureJson } from './fixtures.js';

const bpe = trainBpe(babyAiCorpus(5, 300), { vocabSize: 600 });
const hf = HfTokenizer.fromJSON(bpe.toJSON());
const files = turnwiseChatFiles(hf, { modelMaxLength: 512, maxNewTokens: 16 });
const loaded = parseChatModelFiles({ tokenizerJson: bpe.toJSON(), tokenizerConfig: files.tokenizerConfig, generationConfig: files.generationConfig });

const INSTRUCTION = 'Your goal: go to the red ball. Reply with one of the available actions.';
const observations = [SAMPLE_OBSERVATION, ...babyAiCorpus(9, 5)];
const actions = ['turn left', 'go to red ball 1', 'move forward', 'pick up grey key 1', 'toggle'];

describe("turnwise's own chat template", () => {
  it('renders and tokenizes to exactly what buildContext builds, turn by turn', () => {
    const template = loaded.template;
    if (template === undefined) throw new Error('no template written');
    const choices = encodeActionChoices(bpe, actions);
    for (let turn = 0; turn < observations.length; turn++) {
      const pastTurns = observations.slice(0, turn).map((observationText, k) => ({ observationText, actionTokens: choices[k] }));
      for (const includeInstruction of [true, false]) {
        const expected = buildContext(bpe, { instruction: INSTRUCTION, pastTurns, observationText: observations[turn] }, { history: 'full', includeInstruction, maxContextTokens: 100_000 });
        const messages = [
          ...(includeInstruction ? [{ role: 'system', content: INSTRUCTION }] : []),
          ...pastTurns.flatMap((t, k) => [
            { role: 'user', content: t.observationText },
            { role: 'assistant', content: actions[k] },
          ]),
          { role: 'user', content: observations[turn] },
        ];
        expect([...loaded.tokenizer.encode(template.render(messages, { addGenerationPrompt: true }))], `turn ${turn}`).toEqual([...expected]);
      }
    }
  });

  it('gives the chat context builder the same ids and action choices as buildContext', () => {
    if (loaded.template === undefined) throw new Error('no template written');
    const chat = ChatContextBuilder.create(loaded.template, loaded.tokenizer, { layout: { instructionRole: 'system', acknowledgement: null }, stopTokenIds: loaded.stopTokenIds });
    expect(chat.appendOnly.appendOnly).toBe(true);
    expect(chat.endOfTurnId).toBe(bpe.specialId('end'));
    expect(chat.turnSeparator.length).toBe(0);
    expect(chat.actionChoices(actions).map((ids) => [...ids])).toEqual(encodeActionChoices(bpe, actions).map((ids) => [...ids]));
    const choices = chat.actionChoices(actions);
    for (let turn = 0; turn < observations.length; turn++) {
      const pastTurns = observations.slice(0, turn).map((observationText, k) => ({ observationText, actionTokens: choices[k] }));
      const input = { instruction: INSTRUCTION, pastTurns, observationText: observations[turn] };
      expect([...chat.context(input)]).toEqual([...buildContext(bpe, input, { history: 'full', includeInstruction: true, maxContextTokens: 100_000 })]);
    }
  });

  it('writes the ids transformers needs to stop and pad (not its fallback eos = 2, which is <|system|> here)', () => {
    expect(files.generationConfig).toEqual({ bos_token_id: 1, eos_token_id: 5, pad_token_id: 0, do_sample: false, max_new_tokens: 16 });
    expect(files.tokenizerConfig).toMatchObject({ bos_token: '<|bos|>', eos_token: '<|end|>', pad_token: '<|pad|>', tokenizer_class: 'PreTrainedTokenizerFast', model_max_length: 512, chat_template: TURNWISE_CHAT_TEMPLATE });
    expect(loaded.stopTokenIds).toEqual([5]);
    expect(loaded.bosTokenId).toBe(1);
    expect(loaded.padTokenId).toBe(0);
    expect(Object.keys(files.tokenizerConfig.added_tokens_decoder as object)).toEqual(['0', '1', '2', '3', '4', '5']);
  });
});

describe('tokenizerConfigJson and generationConfigJson', () => {
  it("rewrites a Qwen2.5 folder's added_tokens_decoder field by field as transformers wrote it", () => {
    const original = readFixtureJson<Record<string, unknown>>('qwen2.5', 'tokenizer_config.json');
    const tokenizer = HfTokenizer.fromJSON(readFixtureJson('qwen2.5', 'tokenizer.json'));
    const written = tokenizerConfigJson({ tokenizer, chatTemplate: original.chat_template as string, specialTokens: { eos_token: '<|im_end|>', pad_token: '<|endoftext|>' }, modelMaxLength: 131072, tokenizerClass: 'Qwen2Tokenizer' });
    for (const field of ['added_tokens_decoder', 'chat_template', 'eos_token', 'pad_token', 'bos_token', 'model_max_length', 'tokenizer_class', 'clean_up_tokenization_spaces']) {
      expect(written[field], field).toEqual(original[field]);
    }
  });

  it('writes a list of eos ids when there are several, and refuses none', () => {
    expect(generationConfigJson({ eosTokenIds: [7, 9], sampling: { temperature: 0.7, topP: 0.8 } })).toEqual({ eos_token_id: [7, 9], do_sample: true, temperature: 0.7, top_p: 0.8 });
    expect(() => generationConfigJson({ eosTokenIds: [] })).toThrow(/eosTokenIds/);
    expect(() => tokenizerConfigJson({ tokenizer: hf, specialTokens: { eos_token: '<|nope|>' }, modelMaxLength: 8 })).toThrow(/specialTokens\.eos_token/);
  });
});
