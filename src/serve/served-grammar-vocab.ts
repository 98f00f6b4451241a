/**
 * A served model's vocabulary as the bytes each id writes, for grammar-constrained decoding
 * (`../models/constrain/`). Built once per model (about a second for a 152k vocabulary) and kept.
 *
 * Byte-level tokens (GPT-2's alphabet: Qwen, Llama 3, SmolLM2) give their exact bytes, a byte
 * fallback token (`<0x0A>`) its byte, and a SentencePiece token its string with `▁` read as a
 * space (how Metaspace decodes it inside a reply). Added tokens give their text, except control
 * tokens (special), which a grammar never writes unless its own literal text holds them (e.g.
 * `<tool_call>` where a tokenizer marks it special). Stop ids never write text: the grammar allows
 * them only where its sentence is complete.
 */
import { GrammarVocab } from '../models/constrain/grammar-vocab.js';
import { type TokenDecoder, tokenBytes } from './token-text.js';

const utf8 = new TextEncoder();
const built = new WeakMap<object, Map<string, GrammarVocab>>();

/**
 * The vocabulary of `tokens` ([0, vocabSize)), stop ids excluded and the special tokens in
 * `literals` included; cached per decoder and argument set.
 * @example const vocab = servedGrammarVocab(model.tokens, model.vocabSize, model.stopTokenIds, ['<tool_call>']);
 */
export function servedGrammarVocab(tokens: TokenDecoder, vocabSize: number, stopTokenIds: readonly number[], literals: readonly string[]): GrammarVocab {
  const key = JSON.stringify([vocabSize, stopTokenIds, literals]);
  let perDecoder = built.get(tokens);
  if (perDecoder === undefined) {
    perDecoder = new Map();
    built.set(tokens, perDecoder);
  }
  const known = perDecoder.get(key);
  if (known !== undefined) return known;
  const stops = new Set(stopTokenIds);
  const bytes: (Uint8Array | null)[] = new Array(vocabSize);
  for (let id = 0; id < vocabSize; id++) {
    if (stops.has(id)) bytes[id] = null;
    else if (tokens.specialIds?.has(id) === true) {
      const text = tokens.decode([id], true);
      bytes[id] = literals.some((l) => text.length > 0 && l.includes(text)) ? utf8.encode(text) : null;
    } else bytes[id] = tokenBytesOf(tokens, id);
  }
  const vocab = GrammarVocab.build(bytes);
  perDecoder.set(key, vocab);
  return vocab;
}

function tokenBytesOf(tokens: TokenDecoder, id: number): Uint8Array {
  const raw = tokens.tokenOf?.(id);
  if (tokens.byteLevel !== true && raw !== undefined && tokens.addedIds?.has(id) !== true && !/^<0x[0-9A-Fa-f]{2}>$/.test(raw)) {
    return utf8.encode(raw.replaceAll('\u2581', ' '));
  }
  return Uint8Array.from(tokenBytes(tokens, id));
}
