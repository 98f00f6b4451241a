import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tokenizer as HfTokenizer } from '@huggingface/tokenizers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckpointError, InvalidArgumentError } from '../../../src/core/errors.js';
import { Rng } from '../../../src/core/rng.js';
import type { BpeTokenizer } from '../../../src/models/tokenizer/bpe.js';
import { loadTokenizer, saveTokenizer } from '../../../src/models/tokenizer/io.js';
import { trainBpe } from '../../../src/models/tokenizer/train.js';
import { babyAiCorpus, SAMPLE_OBSERVATION } from './babyai-corpus.js';
import { randomUnicode } from './reference.js';

const ODD_TEXTS = [
  SAMPLE_OBSERVATION,
  'Ünïcödé — “quotes” «guillemets» ‘single’ … ¿qué? ¡sí!',
  '日本語のテキスト 123 と emoji 😀🎉👍🏽 and ZWJ 👨‍👩‍👧',
  'tabs\tand\r\nwindows\n\n\nnewlines   and    spaces  ',
  '((nested [brackets] {braces})) <angle> a/b\\c | pipe ~tilde `tick` @at #hash $5.00 100% ^_^',
  "It's don't we'll I'm they've 'quoted' \"double\" '' \"\"",
  'e\u0301 combining, \u00a0nbsp, \u200bzero-width, \uFEFFbom, Ω≈ç√∫',
  ' leading space and trailing space ',
  '1234567890 3.14159 -42 1e10 0x1F ½ ² Ⅻ ٣',
];

describe('Hugging Face tokenizer.json compatibility', () => {
  let dir: string;
  let tok: BpeTokenizer;
  let hf: HfTokenizer;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'turnwise-tok-'));
    tok = trainBpe([...babyAiCorpus(2, 800), ...ODD_TEXTS, ...ODD_TEXTS], { vocabSize: 700 });
    await saveTokenizer(join(dir, 'tokenizer.json'), tok);
    hf = new HfTokenizer(JSON.parse(await readFile(join(dir, 'tokenizer.json'), 'utf8')), {});
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('gives identical ids to @huggingface/tokenizers on the saved file', () => {
    const rng = Rng.fromSeed(3);
    const texts = [...ODD_TEXTS, ...babyAiCorpus(123, 40), ...Array.from({ length: 200 }, () => randomUnicode(rng, 60))];
    for (const text of texts) {
      expect([...tok.encode(text)], JSON.stringify(text)).toEqual(hf.encode(text).ids);
    }
  });

  it('decodes identically to @huggingface/tokenizers', () => {
    for (const text of ODD_TEXTS) {
      const ids = [...tok.encode(text)];
      expect(hf.decode(ids, { clean_up_tokenization_spaces: false })).toBe(text);
      expect(tok.decode(ids)).toBe(text);
    }
  });

  it('maps the special tokens to ids 0..5 in the file', () => {
    expect(['<|pad|>', '<|bos|>', '<|system|>', '<|obs|>', '<|act|>', '<|end|>'].map((t) => hf.token_to_id(t))).toEqual([0, 1, 2, 3, 4, 5]);
    expect(hf.get_vocab().size).toBe(tok.vocabSize);
  });

  it('loads a saved file back into an identical tokenizer', async () => {
    const loaded = await loadTokenizer(join(dir, 'tokenizer.json'));
    expect(loaded.toJSON()).toEqual(tok.toJSON());
    for (const text of ODD_TEXTS) expect([...loaded.encode(text)]).toEqual([...tok.encode(text)]);
  });

  it('names the missing file or the field at fault when loading fails', async () => {
    await expect(loadTokenizer(join(dir, 'missing.json'))).rejects.toThrow(CheckpointError);
    const json = tok.toJSON() as { pre_tokenizer: unknown };
    await writeFile(join(dir, 'bad.json'), JSON.stringify({ ...json, pre_tokenizer: { type: 'Whitespace' } }));
    await expect(loadTokenizer(join(dir, 'bad.json'))).rejects.toThrow(InvalidArgumentError);
    await expect(loadTokenizer(join(dir, 'bad.json'))).rejects.toThrow(/pre_tokenizer/);
  });
});
