/**
 * `npm run bench -- tool-grammar`: what grammar-constrained tool calls cost per generated token at
 * real vocabulary sizes (SmolLM2's 49,152 ids, Qwen2.5's 151,936), against what every decoding step
 * pays anyway: sampling one token from the full vocabulary's logits (`sampleToken`, softmax + draw).
 *
 * No real tokenizer of that size can be downloaded here, so the vocabulary is synthetic but shaped
 * like a byte-level BPE one: the 256 single bytes, English words and word pieces with and without a
 * leading space (a real word list), digit runs, JSON punctuation pairs, and multi-byte (CJK) pieces.
 * A call `{"name": "guess", "arguments": {...}}` is written token by token (longest match), and the
 * allowed set is computed before each token: inside strings without a length limit the grammar state
 * repeats and the set is cached, inside strings with `maxLength` it is walked each time.
 */
import { performance } from 'node:perf_hooks';
import { Rng } from '../src/core/rng.js';
import { END } from '../src/models/constrain/grammar-state.js';
import { GrammarVocab } from '../src/models/constrain/grammar-vocab.js';
import { compileSchema } from '../src/models/constrain/json-schema-grammar.js';
import { TokenGrammar } from '../src/models/constrain/token-grammar.js';
import { sampleToken } from '../src/models/transformer/sampling.js';
import { guessVocabulary } from '../src/envs/wordle/vocabulary.js';

const utf8 = new TextEncoder();

/** A synthetic byte-level vocabulary of `size` ids (the last one the stop id). */
function syntheticVocab(size: number, rng: Rng): Uint8Array[] {
  const seen = new Set<string>();
  const out: Uint8Array[] = [];
  const add = (bytes: Uint8Array) => {
    const key = Array.from(bytes).join(',');
    if (out.length < size - 1 && !seen.has(key)) {
      seen.add(key);
      out.push(bytes);
    }
  };
  for (let b = 0; b < 256; b++) add(Uint8Array.of(b));
  for (const p of ['{"', '"}', '",', '":', '": "', '"]', '["', '}}', '},', ' {', ' "', '\n', '\n\n', '  ', '    ']) add(utf8.encode(p));
  const words = [...guessVocabulary()];
  while (out.length < size - 1) {
    const r = rng.next();
    const word = words[rng.int(words.length)] as string;
    if (r < 0.45) add(utf8.encode(` ${word.slice(0, 2 + rng.int(4))}`));
    else if (r < 0.8) add(utf8.encode(word.slice(rng.int(2), 2 + rng.int(4)) + (rng.next() < 0.3 ? words[rng.int(words.length)]?.slice(0, 2) : '')));
    else if (r < 0.88) add(utf8.encode(String(rng.int(1000))));
    else add(utf8.encode(String.fromCodePoint(0x4e00 + rng.int(20000), ...(rng.next() < 0.5 ? [0x4e00 + rng.int(20000)] : []))));
  }
  return out;
}

/** `text` as the longest-match tokens of `vocab`. */
function tokenize(text: string, byText: Map<string, number>): number[] {
  const bytes = utf8.encode(text);
  const ids: number[] = [];
  for (let at = 0; at < bytes.length; ) {
    for (let len = Math.min(12, bytes.length - at); len >= 1; len--) {
      const id = byText.get(Array.from(bytes.subarray(at, at + len)).join(','));
      if (id !== undefined) {
        ids.push(id);
        at += len;
        break;
      }
    }
  }
  return ids;
}

function bench(size: number, label: string, schema: object, args: string): { build: number; perToken: number; sample: number; tokens: number } {
  const rng = Rng.fromSeed(1);
  const tokens = syntheticVocab(size, rng);
  const stop = tokens.length;
  const byText = new Map(tokens.map((t, id) => [Array.from(t).join(','), id]));
  let t0 = performance.now();
  const vocab = GrammarVocab.build([...tokens, null]);
  const build = performance.now() - t0;
  const ids = tokenize(args, byText);
  const logits = Float32Array.from({ length: size }, () => rng.next() * 4);
  const all = Int32Array.from({ length: size }, (_, i) => i);
  const rounds = 3;
  let maskMs = 0;
  for (let r = 0; r < rounds; r++) {
    const start = compileSchema(schema).start(END);
    if (start === null) throw new Error(`${label}: the schema admits nothing`);
    const g = new TokenGrammar(vocab, start, [stop]);
    t0 = performance.now();
    for (const id of ids) {
      const allowed = g.allowed();
      if (!allowed.includes(id)) throw new Error(`${label}: the grammar refused token ${id} of its own text`);
      g.accept(id);
    }
    if (!g.complete) throw new Error(`${label}: the text did not complete the grammar`);
    maskMs += performance.now() - t0;
  }
  t0 = performance.now();
  for (let k = 0; k < 50; k++) sampleToken(logits, all, 1, 1, rng.next());
  const sample = (performance.now() - t0) / 50;
  return { build, perToken: maskMs / rounds / ids.length, sample, tokens: ids.length };
}

const CASES = [
  { label: 'short strings with maxLength', schema: { type: 'object', properties: { word: { type: 'string', maxLength: 5 }, row: { type: 'integer' } }, required: ['word'] }, args: '{"word": "crane", "row": 3}' },
  {
    label: 'a long free string (cached)',
    schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
    args: '{"query": "which river flows through the capital of the country that borders both france and spain"}',
  },
  {
    label: 'a long string with maxLength 200',
    schema: { type: 'object', properties: { query: { type: 'string', maxLength: 200 } }, required: ['query'] },
    args: '{"query": "which river flows through the capital of the country that borders both france and spain"}',
  },
];

export async function main(): Promise<void> {
  console.log('tool-grammar: grammar mask per generated token vs one full-vocabulary sampling pass (same run)\n');
  console.log('| vocabulary | arguments | tokens | vocab build ms | mask ms/token | sampling ms/token | mask / sampling |');
  console.log('|---|---|---|---|---|---|---|');
  for (const size of [49_152, 151_936]) {
    for (const c of CASES) {
      const r = bench(size, c.label, c.schema, c.args);
      console.log(`| ${size.toLocaleString('en-US')} | ${c.label} | ${r.tokens} | ${r.build.toFixed(0)} | ${r.perToken.toFixed(2)} | ${r.sample.toFixed(2)} | ${(r.perToken / r.sample).toFixed(2)}x |`);
    }
  }
}
