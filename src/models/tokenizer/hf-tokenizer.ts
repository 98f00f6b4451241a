/**
 * `HfTokenizer`: a pretrained model's own `tokenizer.json`, encoded and decoded through
 * `@huggingface/tokenizers` with the differences from the Rust library (which transformers uses)
 * rewritten away (hf-compat.ts) and ByteFallback decoding made Rust-faithful.
 *
 * Why the library and not turnwise's own BPE: it implements every normalizer, pre-tokenizer and
 * decoder the supported families write (NFC, Split with Oniguruma regexes, ByteLevel, Metaspace,
 * byte fallback, added tokens), and on an observation-sized text it encodes a few hundred thousand
 * tokens a second, far below a transformer forward pass in cost (bench `tokenizer`).
 *
 * Semantics are those of `tokenizer.json` as the Rust `tokenizers` library (and transformers 4, or
 * transformers 5 with a generic `tokenizer_class`) applies it: `encode(text)` is
 * `tokenizer(text, add_special_tokens=False)`: added and special token strings inside `text` are
 * recognised (as when transformers tokenizes a rendered chat template); no post-processor runs.
 */
import { Tokenizer as JsTokenizer } from '@huggingface/tokenizers';
import { InvalidArgumentError } from '../../core/errors.js';
import { compatibleTokenizerJson } from './hf-compat.js';
import { LruCache } from './lru.js';

/** Options of {@link HfTokenizer.fromJSON}. */
export interface HfTokenizerOptions {
  /** Name used in error messages (a file path). Default `tokenizer.json`. */
  readonly source?: string;
  /** transformers' `clean_up_tokenization_spaces` (from tokenizer_config.json). Default false. */
  readonly cleanUpTokenizationSpaces?: boolean;
  /** Whole texts remembered (LRU): observations repeat across group samples. Default 4096; 0 disables. */
  readonly textCacheSize?: number;
}

/** An added token of `tokenizer.json` (`added_tokens`). */
export interface AddedTokenInfo {
  readonly id: number;
  readonly content: string;
  /** Special tokens are dropped by `decode(ids, { skipSpecialTokens: true })`. */
  readonly special: boolean;
}

/**
 * A Hugging Face `tokenizer.json` tokenizer (byte-level BPE or Metaspace/byte-fallback BPE).
 * @example
 * const tok = HfTokenizer.fromJSON(JSON.parse(readFileSync('tokenizer.json', 'utf8')));
 * const ids = tok.encode('<|im_start|>user\nhi<|im_end|>\n'); // specials recognised
 * tok.decode(ids, { skipSpecialTokens: true }); // 'user\nhi\n'
 */
export class HfTokenizer {
  /** Number of token ids, added tokens included (transformers' `len(tokenizer)`). */
  readonly vocabSize: number;
  /** The added tokens, in id order. */
  readonly addedTokens: readonly AddedTokenInfo[];
  private readonly inner: JsTokenizer;
  private readonly json: object;
  private readonly specialIds: ReadonlySet<number>;
  private readonly cleanUp: boolean;
  private readonly textCache: LruCache<string, Int32Array>;

  private constructor(json: object, inner: JsTokenizer, vocabSize: number, added: AddedTokenInfo[], options: HfTokenizerOptions) {
    this.json = json;
    this.inner = inner;
    this.vocabSize = vocabSize;
    this.addedTokens = added;
    this.specialIds = new Set(added.filter((t) => t.special).map((t) => t.id));
    this.cleanUp = options.cleanUpTokenizationSpaces ?? false;
    this.textCache = new LruCache(options.textCacheSize ?? 4096);
  }

  /**
   * Builds a tokenizer from a parsed `tokenizer.json`. Throws `InvalidArgumentError` naming the
   * field at fault (`tokenizer.json:pre_tokenizer.behavior`, …).
   * @example const tok = HfTokenizer.fromJSON(json, { source: 'models/qwen/tokenizer.json' });
   */
  static fromJSON(json: unknown, options: HfTokenizerOptions = {}): HfTokenizer {
    const source = options.source ?? 'tokenizer.json';
    const fixed = compatibleTokenizerJson(json, source);
    let inner: JsTokenizer;
    try {
      inner = new JsTokenizer(fixed, { clean_up_tokenization_spaces: false });
    } catch (cause) {
      throw new InvalidArgumentError(source, `@huggingface/tokenizers cannot read it: ${(cause as Error).message}`, { cause });
    }
    if (inner.decoder !== null) inner.decoder = withRustByteFallback(inner.decoder);
    const vocab = (fixed.model as { vocab: Record<string, number> }).vocab;
    const added = (fixed.added_tokens as { id: number; content: string; special?: boolean }[])
      .map((t) => ({ id: t.id, content: t.content, special: t.special === true }))
      .sort((a, b) => a.id - b.id);
    let size = 0;
    for (const id of Object.values(vocab)) size = Math.max(size, id + 1);
    for (const t of added) size = Math.max(size, t.id + 1);
    return new HfTokenizer(json as object, inner, size, added, options);
  }

  /**
   * Ids of `text`, as transformers' `tokenizer(text, add_special_tokens=False)`. Returns a fresh array.
   * @example tok.encode('') // Int32Array []
   */
  encode(text: string): Int32Array {
    const hit = this.textCache.get(text);
    if (hit !== undefined) return hit.slice();
    const ids = text.length === 0 ? new Int32Array(0) : Int32Array.from(this.inner.encode(text, { add_special_tokens: false }).ids);
    this.textCache.set(text, ids);
    return ids.slice();
  }

  /**
   * Text of `ids`, as transformers' `decode(ids, skip_special_tokens=…)`. Throws
   * `InvalidArgumentError('ids[i]')` for an id outside the vocabulary.
   * @example tok.decode(tok.encode('hello')) // 'hello'
   */
  decode(ids: ArrayLike<number>, options: { readonly skipSpecialTokens?: boolean } = {}): string {
    const kept: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (!(Number.isInteger(id) && id >= 0 && id < this.vocabSize) || this.inner.id_to_token(id) === undefined) {
        throw InvalidArgumentError.format(`ids[${i}]`, `expected a token id in [0, ${this.vocabSize}), got ${id}`);
      }
      if (!(options.skipSpecialTokens === true && this.specialIds.has(id))) kept.push(id);
    }
    if (kept.length === 0) return '';
    return this.inner.decode(kept, { skip_special_tokens: false, clean_up_tokenization_spaces: this.cleanUp });
  }

  /**
   * Id of a token string (vocabulary entry or added token), `undefined` if there is none.
   * @example tok.idOf('<|im_end|>') // 151645 in Qwen2.5
   */
  idOf(token: string): number | undefined {
    return this.inner.token_to_id(token);
  }

  /**
   * Token string of an id (as in `tokenizer.json`), `undefined` outside the vocabulary.
   * @example tok.tokenOf(tok.idOf('Ġthe')!) // 'Ġthe'
   */
  tokenOf(id: number): string | undefined {
    return this.inner.id_to_token(id);
  }

  /**
   * Whether `id` is a special added token (skipped by `skipSpecialTokens`).
   * @example tok.isSpecial(tok.idOf('<|im_end|>')!) // true
   */
  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  /** The `tokenizer.json` object this tokenizer was built from (unchanged, for checkpoints). */
  toJSON(): object {
    return this.json;
  }
}

/**
 * The JS ByteFallback decoder decodes `<0x..>` runs with a default `TextDecoder`, which drops a
 * leading U+FEFF and replaces an invalid run by one U+FFFD per maximal subpart. Rust keeps the BOM
 * and writes one U+FFFD per byte token when the run is not valid UTF-8. This mirrors Rust.
 */
function withRustByteFallback(decoder: Decoder): Decoder {
  // The package's type declarations do not resolve its decoder classes under NodeNext, so the
  // decoders are recognised by their config type (public on every decoder).
  const sequence = decoder as Decoder & { decoders?: Decoder[] };
  if (decoder.config.type === 'Sequence' && Array.isArray(sequence.decoders)) {
    sequence.decoders = sequence.decoders.map(withRustByteFallback);
  } else if (decoder.config.type === 'ByteFallback') {
    decoder.decode_chain = rustByteFallback;
  }
  return decoder;
}

type Decoder = NonNullable<JsTokenizer['decoder']>;

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function rustByteFallback(tokens: string[]): string[] {
  const out: string[] = [];
  let bytes: number[] = [];
  const flush = (): void => {
    if (bytes.length === 0) return;
    try {
      out.push(strictUtf8.decode(Uint8Array.from(bytes)));
    } catch {
      for (let i = 0; i < bytes.length; i++) out.push('\uFFFD');
    }
    bytes = [];
  };
  for (const token of tokens) {
    const byte = token.length === 6 && token.startsWith('<0x') && token.endsWith('>') ? Number.parseInt(token.slice(3, 5), 16) : Number.NaN;
    if (Number.isNaN(byte)) {
      flush();
      out.push(token);
    } else {
      bytes.push(byte);
    }
  }
  flush();
  return out;
}
