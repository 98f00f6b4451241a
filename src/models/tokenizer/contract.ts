/**
 * The tokenizer contract the rest of turnwise relies on. The implementation (byte-level BPE
 * trained on environment text, saved as Hugging Face `tokenizer.json`) lives in
 * `src/models/tokenizer/`.
 */

/** Special tokens of the turnwise chat layout. Ids are fixed: 0..5 in this order. */
export const SPECIAL_TOKENS = {
  pad: '<|pad|>',
  bos: '<|bos|>',
  /** Opens the environment instruction (system) segment. */
  system: '<|system|>',
  /** Opens an observation (user) segment. */
  observation: '<|obs|>',
  /** Opens an action (assistant) segment: the model generates after it. */
  action: '<|act|>',
  /** Ends an action: the last token of every generated action. */
  end: '<|end|>',
} as const;

export type SpecialTokenName = keyof typeof SPECIAL_TOKENS;

export interface Tokenizer {
  /** Total vocabulary size including special tokens. */
  readonly vocabSize: number;
  /** Id of a special token. */
  specialId(name: SpecialTokenName): number;
  /** Encodes plain text (special-token strings inside `text` are NOT interpreted). */
  encode(text: string): Int32Array;
  /** Decodes ids back to text; special tokens are dropped unless `keepSpecial`. */
  decode(ids: ArrayLike<number>, keepSpecial?: boolean): string;
  /** Hugging Face `tokenizer.json` content. */
  toJSON(): object;
}
