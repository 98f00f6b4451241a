/**
 * Byte-level BPE tokenizer: training, encoding, Hugging Face `tokenizer.json` files.
 * @example
 * import { trainBpe, saveTokenizer } from './models/tokenizer/index.js';
 * const tok = trainBpe(corpus, { vocabSize: 512 });
 * await saveTokenizer('tokenizer.json', tok);
 */
export type { BpeTokenizerOptions } from './bpe.js';
export type { AddedTokenInfo, HfTokenizerOptions } from './hf-tokenizer.js';
export { HfTokenizer } from './hf-tokenizer.js';
export { BpeTokenizer } from './bpe.js';
export { loadTokenizer, saveTokenizer } from './io.js';
export { preTokenize, SPLIT_PATTERN } from './pretokenize.js';
export type { TrainBpeOptions } from './train.js';
export { trainBpe } from './train.js';
