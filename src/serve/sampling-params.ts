/**
 * The request parameters chat completions and the legacy completions share — sampling, choices,
 * stop strings, streaming — and the ones OpenAI clients send that turnwise accepts only at their
 * neutral value (a penalty it does not apply is refused rather than silently ignored).
 */
import { z } from 'zod';
import { integer } from './validation.js';

/** Most choices per prompt (OpenAI's limit for `n`). */
export const MAX_CHOICES = 128;
/** Most alternatives per token (`top_logprobs`, legacy `logprobs`), as OpenAI and vLLM allow. */
export const MAX_TOP_LOGPROBS = 20;
/** Most stop strings, and the longest. */
export const MAX_STOP_STRINGS = 16;
export const MAX_STOP_CHARS = 256;

const stopString = z.string().min(1).max(MAX_STOP_CHARS);

/** Fields both endpoints accept. */
export const samplingFields = {
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().gt(0).max(1).nullish(),
  n: integer().min(1).max(MAX_CHOICES).nullish(),
  seed: integer().min(Number.MIN_SAFE_INTEGER).max(Number.MAX_SAFE_INTEGER).nullish(),
  stop: z.union([stopString, z.array(stopString).max(MAX_STOP_STRINGS)], { error: 'a string or an array of strings' }).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).strict().nullish(),
  // No effect on what is generated.
  user: z.string().nullish(),
  // Accepted only when they change nothing.
  presence_penalty: z.number().refine((v) => v === 0, 'turnwise serve applies no penalties; only 0 is accepted').nullish(),
  frequency_penalty: z.number().refine((v) => v === 0, 'turnwise serve applies no penalties; only 0 is accepted').nullish(),
  logit_bias: z
    .record(z.string(), z.number())
    .refine((bias) => Object.keys(bias).length === 0, 'turnwise serve applies no logit bias; only {} is accepted')
    .nullish(),
} as const;

/** The shared fields as parsed. */
export interface SamplingParams {
  readonly temperature?: number | null;
  readonly top_p?: number | null;
  readonly n?: number | null;
  readonly seed?: number | null;
  readonly stop?: string | readonly string[] | null;
}

/**
 * The stop strings of a request as a list.
 * @example stopStrings({ stop: '\n' }) // ['\n']
 */
export function stopStrings(params: SamplingParams): readonly string[] {
  const stop = params.stop;
  if (stop === undefined || stop === null) return [];
  return typeof stop === 'string' ? [stop] : stop;
}
