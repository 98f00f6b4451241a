/**
 * `POST /v1/completions`, the legacy endpoint log-likelihood evaluation uses
 * (lm-evaluation-harness's `local-completions` sends `echo: true, max_tokens: 1, logprobs: 1,
 * temperature: 0` and sums `token_logprobs[ctxlen:-1]`).
 *
 * Each prompt (text, tokenized as transformers does with `add_special_tokens=False`, or token ids)
 * gets `n` choices, indexed prompt-major (`index = prompt * n + choice`); a `seed` seeds every
 * prompt alike, so batching prompts into one request changes no result. With `echo` the choice's
 * text starts with the prompt (decoded, special tokens kept) and, with `logprobs`, its tokens'
 * log-probs come from one full forward pass over the prompt: the model's exact log-probs, the
 * first token `null` (nothing predicts it). `text_offset` indexes into the returned text.
 * `max_tokens: 0` with `echo` scores the prompt without generating.
 */
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RouteContext, ServeEnv } from './route-context.js';
import { type CompletionRequest, DEFAULT_COMPLETION_TOKENS, parseCompletionRequest, promptInputs } from './completion-request.js';
import { choiceSeed, type GeneratedChoice, generateChoice } from './generation.js';
import { type LegacyLogprobs, type LegacyPosition, legacyLogprobs, topAt } from './logprobs-format.js';
import { ApiError, completionContextError } from './openai-errors.js';
import { stopStrings } from './sampling-params.js';
import type { PromptScores } from './served-model.js';
import { pieceOffsets, textPieces } from './token-text.js';

/** One choice as returned: its text in segments (echo, then one per generated token) for streaming. */
interface CompletionChoice {
  readonly index: number;
  readonly text: string;
  readonly logprobs: LegacyLogprobs | null;
  readonly finishReason: 'stop' | 'length';
  readonly completionTokens: number;
  /** [echo?, token…] text pieces and how many logprob positions each covers. */
  readonly segments: readonly { readonly text: string; readonly positions: number }[];
}

/** The prompt ids of one input, checked against the vocabulary. */
function promptIds(ctx: RouteContext, input: ReturnType<typeof promptInputs>[number], at: string): Int32Array {
  const ids = 'text' in input ? ctx.model.tokens.encode(input.text) : Int32Array.from(input.ids);
  if (ids.length === 0) throw ApiError.invalid(at, `Invalid value for '${at}': the prompt is empty (0 tokens).`, 'invalid_value');
  const bad = ids.findIndex((id) => id >= ctx.model.vocabSize);
  if (bad >= 0) throw ApiError.invalid(`${at}[${bad}]`, `Invalid value for '${at}[${bad}]': token id ${ids[bad]} is outside the vocabulary [0, ${ctx.model.vocabSize}).`, 'invalid_value');
  return ids;
}

async function complete(ctx: RouteContext, req: CompletionRequest, id: string): Promise<{ choices: CompletionChoice[]; promptTokens: number }> {
  const { model, limits } = ctx;
  ctx.checkModel(req.model);
  const inputs = promptInputs(req.prompt);
  const n = req.n ?? 1;
  if (inputs.length * n > limits.maxChoices) {
    throw ApiError.invalid('n', `Invalid value for 'n': ${inputs.length} prompts x n ${n} = ${inputs.length * n} choices, at most ${limits.maxChoices} per request.`, 'invalid_value');
  }
  const maxTokens = req.max_tokens ?? DEFAULT_COMPLETION_TOKENS;
  const single = typeof req.prompt === 'string' || typeof req.prompt[0] === 'number';
  const prompts = inputs.map((input, p) => promptIds(ctx, input, single ? 'prompt' : `prompt[${p}]`));
  for (const ids of prompts) {
    if (ids.length + maxTokens > model.maxContext) throw completionContextError(model.maxContext, ids.length, maxTokens);
  }
  const echo = req.echo === true;
  const k = req.logprobs ?? null;
  const settings = { temperature: req.temperature ?? model.defaults.temperature, topP: req.top_p ?? model.defaults.topP };
  const stop = stopStrings(req);
  const scores: (PromptScores | null)[] = await Promise.all(prompts.map((ids) => (echo && k !== null ? ctx.batcher.exclusive(() => model.scorer.score(ids, k)) : Promise.resolve(null))));
  const generated: (GeneratedChoice | null)[][] = await Promise.all(
    prompts.map((ids, p) =>
      Promise.all(
        Array.from({ length: n }, (_, i) =>
          maxTokens === 0
            ? Promise.resolve(null)
            : generateChoice(ctx.batcher, settings, { prompt: ids, actionChoices: null, maxTokens, seed: choiceSeed(req.seed, i), topLogprobs: k ?? 0, stop, stopTokenIds: model.stopTokenIds, key: `${id}/${p}/${i}` }, model.tokens),
        ),
      ),
    ),
  );
  const choices: CompletionChoice[] = [];
  prompts.forEach((ids, p) => {
    const echoPieces = echo ? textPieces(model.tokens, ids, true) : [];
    const echoText = echoPieces.join('');
    generated[p]?.forEach((gen, i) => {
      const positions: LegacyPosition[] = [];
      const offsets: number[] = [];
      if (echo) {
        const score = scores[p] ?? null;
        ids.forEach((tokenId, j) => {
          positions.push(j === 0 || score === null ? { id: tokenId, logprob: null, top: null } : { id: tokenId, logprob: score.logprobs[j - 1] as number, top: topAt(score.top, j - 1) });
        });
        offsets.push(...pieceOffsets(echoPieces));
      }
      if (gen !== null) {
        gen.tokens.forEach((tokenId, j) => {
          positions.push({ id: tokenId, logprob: gen.logprobs[j] as number, top: topAt(gen.top, j) });
        });
        offsets.push(...pieceOffsets(gen.pieces, echoText.length));
      }
      choices.push({
        index: p * n + i,
        text: echoText + (gen?.text ?? ''),
        logprobs: k === null ? null : legacyLogprobs(model.tokens, positions, offsets),
        finishReason: gen?.finishReason ?? 'length',
        completionTokens: gen?.tokens.length ?? 0,
        segments: [...(echo ? [{ text: echoText, positions: ids.length }] : []), ...(gen?.pieces ?? []).map((piece) => ({ text: piece, positions: 1 }))],
      });
    });
  });
  return { choices, promptTokens: prompts.reduce((sum, ids) => sum + ids.length, 0) };
}

/** The positions [from, to) of a legacy logprobs object. */
function sliceLogprobs(l: LegacyLogprobs, from: number, to: number): LegacyLogprobs {
  return { tokens: l.tokens.slice(from, to), token_logprobs: l.token_logprobs.slice(from, to), top_logprobs: l.top_logprobs.slice(from, to), text_offset: l.text_offset.slice(from, to) };
}

/**
 * Adds the route to `app`.
 * @example registerCompletionsRoute(app, ctx);
 */
export function registerCompletionsRoute(app: Hono<ServeEnv>, ctx: RouteContext): void {
  app.post('/v1/completions', async (c) => {
    const req = parseCompletionRequest(await ctx.readJson(c), ctx.limits.maxPrompts);
    const id = `cmpl-turnwise-${ctx.nextId()}`;
    const { choices, promptTokens } = await complete(ctx, req, id);
    const completionTokens = choices.reduce((sum, ch) => sum + ch.completionTokens, 0);
    const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
    const head = { id, object: 'text_completion', created: ctx.created(), model: ctx.model.id, system_fingerprint: ctx.fingerprint() };
    if (req.stream !== true) {
      return c.json({ ...head, choices: choices.map((ch) => ({ index: ch.index, text: ch.text, logprobs: ch.logprobs, finish_reason: ch.finishReason })), usage });
    }
    const chunk = (index: number, text: string, logprobs: LegacyLogprobs | null, finish: string | null) => JSON.stringify({ ...head, choices: [{ index, text, logprobs, finish_reason: finish }] });
    return streamSSE(c, async (stream) => {
      for (const ch of choices) {
        let at = 0;
        for (const segment of ch.segments) {
          const logprobs = ch.logprobs === null ? null : sliceLogprobs(ch.logprobs, at, at + segment.positions);
          at += segment.positions;
          if (segment.text === '' && logprobs === null) continue;
          await stream.writeSSE({ data: chunk(ch.index, segment.text, logprobs, null) });
        }
        await stream.writeSSE({ data: chunk(ch.index, '', null, ch.finishReason) });
      }
      if (req.stream_options?.include_usage === true) await stream.writeSSE({ data: JSON.stringify({ ...head, choices: [], usage }) });
      await stream.writeSSE({ data: '[DONE]' });
    });
  });
}
