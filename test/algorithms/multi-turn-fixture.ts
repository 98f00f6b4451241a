/**
 * A hand-built multi-turn batch in the `[B·T]` layout (T = 7), with masked environment
 * (observation) tokens between turns, variable turn counts and lengths, and padding:
 *
 *   row 0 (group a): A A E E A . .      turns 0,0,·,·,1     reward 1 on slot 4
 *   row 1 (group a): A E A A E A .      turns 0,·,1,1,·,2   reward 0.5 on slot 5
 *   row 2 (group b): A A A . . . .      turn 0              reward 1 on slot 2
 *   row 3 (group b): A . . . . . .      turn 0              reward 0
 *
 * (A = agent token, mask 1; E = environment token, mask 0; . = padding, mask 0.) The expected
 * values in the tests are worked by hand from these numbers.
 */
export const T = 7;
export const groupIds = ['a', 'a', 'b', 'b'];
// biome-ignore format: one row per line
export const mask = Float32Array.of(
  1, 1, 0, 0, 1, 0, 0,
  1, 0, 1, 1, 0, 1, 0,
  1, 1, 1, 0, 0, 0, 0,
  1, 0, 0, 0, 0, 0, 0,
);
// biome-ignore format: one row per line
export const rewards = Float32Array.of(
  0, 0, 0, 0, 1, 0, 0,
  0, 0, 0, 0, 0, 0.5, 0,
  0, 0, 1, 0, 0, 0, 0,
  0, 0, 0, 0, 0, 0, 0,
);
// biome-ignore format: one row per line
export const values = Float32Array.of(
  0.2, 0.4, 9, 9, 0.6, 9, 9,
  0.1, 9, 0.3, 0.5, 9, 0.2, 9,
  0.5, 0.5, 0.5, 9, 9, 9, 9,
  0.3, 9, 9, 9, 9, 9, 9,
);
// biome-ignore format: one row per line
export const turnIds = Int32Array.of(
  0, 0, -1, -1, 1, -1, -1,
  0, -1, 1, 1, -1, 2, -1,
  0, 0, 0, -1, -1, -1, -1,
  0, -1, -1, -1, -1, -1, -1,
);

/** Places per-agent-token numbers (row by row, in order) into a [B·T] array with 0 elsewhere. */
export function onAgentTokens(perRow: number[][]): Float32Array {
  const out = new Float32Array(mask.length);
  perRow.forEach((row, b) => {
    let k = 0;
    for (let t = 0; t < T; t++) if (mask[b * T + t] === 1) out[b * T + t] = row[k++];
  });
  return out;
}
