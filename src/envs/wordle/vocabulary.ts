/**
 * The guess vocabulary: every five-letter lower-case word of the `word-list` package (Sindre
 * Sorhus' English word list, 12.5 k such words), read once and cached. Why that package: it is a
 * maintained, MIT-licensed plain list made for word games, so nothing is scraped or hand-kept here.
 */
import { readFileSync } from 'node:fs';
import wordListPath from 'word-list';

let cached: ReadonlySet<string> | null = null;

/**
 * The vocabulary as a set (loaded on first use, about 10 ms).
 * @example guessVocabulary().has('crane') // true
 */
export function guessVocabulary(): ReadonlySet<string> {
  if (cached === null) {
    const words = readFileSync(wordListPath, 'utf8')
      .split('\n')
      .filter((w) => /^[a-z]{5}$/.test(w));
    cached = new Set(words);
  }
  return cached;
}
