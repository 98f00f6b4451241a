/**
 * The AgentGym BabyAI server transcripts (fixtures/agentgym-babyai/README.md) and the comparison
 * every replay test makes: one recorded episode against the bodies turnwise answered.
 */
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

/** A reset or step body as the server answered it. */
export type Body = Record<string, unknown>;

/** One recorded episode. */
export interface Transcript {
  readonly data_idx: number;
  readonly level_index: number;
  readonly seed: number;
  readonly reset: Body;
  readonly steps: readonly { readonly action: string; readonly response: Body }[];
}

/** All 800 recorded episodes, ascending `data_idx`. */
export function loadTranscripts(): Transcript[] {
  const gz = readFileSync(new URL('./fixtures/agentgym-babyai/transcripts.jsonl.gz', import.meta.url));
  return gunzipSync(gz)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Transcript);
}

/** The server's answer for GoToObjS6-v0, which Gymnasium 0.29.1 no longer registers. */
export const GOTOOBJS6_ERROR = 'Environment version v0 for `BabyAI-GoToObjS6` is deprecated. Please use `BabyAI-GoToObjS6-v1` instead.';

/**
 * The first difference between a recorded episode and turnwise's bodies (`reset`, then one per
 * step), or null when every body is identical (deep equality of the JSON values).
 */
export function firstDifference(t: Transcript, reset: Body, steps: readonly Body[]): string | null {
  if (JSON.stringify(reset) !== JSON.stringify(t.reset)) return `data_idx ${t.data_idx} reset:\n  got  ${JSON.stringify(reset)}\n  want ${JSON.stringify(t.reset)}`;
  for (let k = 0; k < t.steps.length; k++) {
    const want = t.steps[k]?.response;
    if (JSON.stringify(steps[k]) !== JSON.stringify(want)) return `data_idx ${t.data_idx} step ${k} (${t.steps[k]?.action}):\n  got  ${JSON.stringify(steps[k])}\n  want ${JSON.stringify(want)}`;
  }
  return steps.length === t.steps.length ? null : `data_idx ${t.data_idx}: ${steps.length} steps, recorded ${t.steps.length}`;
}
