/**
 * Wordle's feedback rule, with duplicate letters handled as the game does: greens first; then,
 * left to right, a letter is yellow only while the answer still has an unmatched copy of it, and
 * grey otherwise. Marks are written `g` (right letter, right spot), `y` (in the word, elsewhere)
 * and `b` (no unmatched copy), as LMRL-Gym writes them.
 */

/** Five marks, e.g. `bygbb`. */
export type Marks = string;

/**
 * The marks of `guess` against `answer` (both five lower-case letters).
 * @example scoreGuess('speed', 'abide') // 'bbyby': only one e is marked, as abide has one
 */
export function scoreGuess(guess: string, answer: string): Marks {
  const marks = ['b', 'b', 'b', 'b', 'b'];
  // Unmatched answer letters by letter code (a = 0); a plain array because this runs for every
  // pool word on every guess.
  const unmatched = new Array<number>(26).fill(0);
  for (let i = 0; i < 5; i++) {
    if (guess[i] === answer[i]) marks[i] = 'g';
    else unmatched[answer.charCodeAt(i) - 97]++;
  }
  for (let i = 0; i < 5; i++) {
    if (marks[i] === 'g') continue;
    const letter = guess.charCodeAt(i) - 97;
    if ((unmatched[letter] ?? 0) > 0) {
      marks[i] = 'y';
      unmatched[letter]--;
    }
  }
  return marks.join('');
}

/**
 * True when `word` could be the answer given every (guess, marks) pair so far.
 * @example isConsistent('caper', [{ guess: 'crane', marks: 'gyyby' }]) // true
 */
export function isConsistent(word: string, history: readonly { guess: string; marks: Marks }[]): boolean {
  return history.every((h) => scoreGuess(h.guess, word) === h.marks);
}
