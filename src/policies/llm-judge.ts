/**
 * An LLM-as-judge reward: each agent turn is shown, with the episode so far, to a model behind any
 * OpenAI-compatible chat endpoint (`turnwise serve`, vLLM, a hosted API) with a rubric; the model
 * answers with a score ("Score: N", or `{"reason", "score"}` JSON under `structured`, asked for with
 * `response_format`), which is parsed, range-checked and scaled to [0, weight]. Identical
 * prompts are asked once (an in-process cache), failed requests are retried with back-off (429,
 * 5xx, connection errors; `retry.ts`) and at most `concurrency` requests are in flight
 * (`semaphore.ts`). Used as the reward shaper `llm-judge` (`src/runtime/reward-shaping.ts`), so
 * with `reward.mode: outcome+shaped` the learner trains on the environment's outcome plus the
 * judge's turn scores.
 */
import { createHash } from 'node:crypto';
import OpenAI from 'openai';
import { z } from 'zod';
import { TurnwiseError } from '../core/errors.js';
import { classifyOpenAIError } from './openai-chat.js';
import { realSleep, withRetries } from './retry.js';
import { Semaphore } from './semaphore.js';

/** The default rubric: is the turn a sensible, well-formed step towards the task? */
export const DEFAULT_JUDGE_RUBRIC = [
  'You grade one step of an agent working on a task in a text environment.',
  'Given the task, the history and the step, rate how much the step helps solve the task: 0 = useless, invalid or harmful, 10 = the best possible step.',
  'Reply with a short reason, then a last line "Score: N".',
].join('\n');

/** `reward.settings` of the `llm-judge` shaper. */
export const llmJudgeSettingsSchema = z
  .object({
    endpoint: z.string().url().describe('Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:8000/v1 (turnwise serve, vLLM).'),
    model: z.string().min(1).default('default').describe('Model name sent with each request.'),
    apiKeyEnv: z.string().min(1).optional().describe('Environment variable holding the API key (none sent when absent).'),
    rubric: z.string().min(1).default(DEFAULT_JUDGE_RUBRIC).describe('System prompt: what to grade and how to answer ("Score: N").'),
    min: z.number().default(0).describe('Lowest score the rubric allows.'),
    max: z.number().default(10).describe('Highest score the rubric allows.'),
    weight: z.number().min(0).default(1).describe('A score of max becomes this reward (min becomes 0).'),
    concurrency: z.number().int().min(1).max(256).default(8).describe('Judge requests in flight at most.'),
    retries: z.number().int().min(0).max(10).default(3).describe('Retries of a failed request (429, 5xx, connection errors).'),
    timeoutMs: z.number().int().positive().default(60_000).describe('Per-request time limit.'),
    maxTokens: z.number().int().positive().default(256).describe('Most tokens of the judge’s reply.'),
    structured: z
      .boolean()
      .default(false)
      .describe(
        'Ask for {"reason": …, "score": N} as JSON (response_format json_schema) instead of a "Score: N" line: a server that keeps replies to a schema (turnwise serve, vLLM, OpenAI) then always answers a score that parses, and one in range when min and max are integers at most 100 apart (they are listed as an enum).',
      ),
  })
  .strict()
  .refine((s) => s.max > s.min, { message: 'max must be above min', path: ['max'] });

/** Parsed judge settings. */
export type LlmJudgeSettings = z.output<typeof llmJudgeSettingsSchema>;

/** What the judge is shown. */
export interface JudgeInput {
  readonly taskId: string;
  /** The episode before this turn: observation and action of each earlier turn. */
  readonly history: readonly { readonly observation: string; readonly action: string }[];
  readonly observation: string;
  readonly action: string;
}

/**
 * The score on the judge's reply: the number after the last "Score:" (else the last number).
 * @example parseJudgeScore('Good step.\nScore: 7') // 7
 */
export function parseJudgeScore(reply: string): number | null {
  const marked = [...reply.matchAll(/score\s*[:=]\s*(-?\d+(?:\.\d+)?)/gi)];
  const pick = marked.at(-1)?.[1] ?? [...reply.matchAll(/-?\d+(?:\.\d+)?/g)].at(-1)?.[0];
  return pick === undefined ? null : Number(pick);
}

/** What a structured judge is told to answer (the schema below keeps a constraining server to it). */
const STRUCTURED_ANSWER = 'Answer as JSON: {"reason": "<one short sentence>", "score": <your score>}.';

/**
 * The JSON schema of a structured judge's reply: a short reason and the score, listed as an enum
 * when the range is of at most 101 integers (so a grammar-constrained server cannot leave it).
 * @example judgeReplySchema(0, 10).properties.score // { type: 'integer', enum: [0, 1, …, 10] }
 */
export function judgeReplySchema(min: number, max: number) {
  const listed = Number.isInteger(min) && Number.isInteger(max) && max - min <= 100;
  const score = listed ? { type: 'integer', enum: Array.from({ length: max - min + 1 }, (_, i) => min + i) } : { type: 'number' };
  return { type: 'object', properties: { reason: { type: 'string', maxLength: 300 }, score }, required: ['reason', 'score'], additionalProperties: false };
}

/** The score of a structured reply, or null when it is not `{"score": <number>, …}`. */
function structuredScore(reply: string): number | null {
  try {
    const value = JSON.parse(reply) as { score?: unknown };
    return typeof value.score === 'number' ? value.score : null;
  } catch {
    return null;
  }
}

/** The user message for one turn. */
export function judgePrompt(input: JudgeInput): string {
  const past = input.history.map((t, i) => `Turn ${i + 1}\nObservation: ${t.observation}\nAction: ${t.action}`).join('\n\n');
  return [`Task: ${input.taskId}`, past.length > 0 ? `History:\n${past}` : 'History: (none)', `Current observation: ${input.observation}`, `Step to grade: ${input.action}`].join('\n\n');
}

/**
 * A judge bound to its settings (one per run).
 * @example const judge = new LlmJudge(llmJudgeSettingsSchema.parse({ endpoint: 'http://127.0.0.1:8000/v1' })); await judge.score(input); // in [0, 1]
 */
export class LlmJudge {
  private readonly client: OpenAI;
  private readonly gate: Semaphore;
  private readonly cache = new Map<string, Promise<number>>();
  /** Requests sent (retries included), for tests and logs. */
  requests = 0;

  constructor(private readonly settings: LlmJudgeSettings) {
    const apiKey = settings.apiKeyEnv === undefined ? 'none' : process.env[settings.apiKeyEnv];
    if (apiKey === undefined || apiKey === '') throw new TurnwiseError(`llm-judge: environment variable ${settings.apiKeyEnv} (reward.settings.apiKeyEnv) is not set`);
    this.client = new OpenAI({ baseURL: settings.endpoint, apiKey, maxRetries: 0, timeout: settings.timeoutMs });
    this.gate = new Semaphore(settings.concurrency);
  }

  /** The reward of one turn, in [0, weight]; the same prompt is asked once. */
  score(input: JudgeInput): Promise<number> {
    const prompt = judgePrompt(input);
    const key = createHash('sha256').update(prompt).digest('hex');
    let pending = this.cache.get(key);
    if (pending === undefined) {
      pending = this.ask(prompt);
      this.cache.set(key, pending);
      pending.catch(() => this.cache.delete(key)); // a failure is not cached
    }
    return pending;
  }

  private async ask(prompt: string): Promise<number> {
    const { model, rubric, maxTokens, min, max, weight, retries, endpoint, structured } = this.settings;
    const system = structured ? `${rubric}\n${STRUCTURED_ANSWER}` : rubric;
    const format = structured ? { response_format: { type: 'json_schema' as const, json_schema: { name: 'judge_score', schema: judgeReplySchema(min, max), strict: true } } } : {};
    const reply = await this.gate.run(() =>
      withRetries(
        () => {
          this.requests++;
          return this.client.chat.completions.create({ model, temperature: 0, max_tokens: maxTokens, messages: [{ role: 'system', content: system }, { role: 'user', content: prompt }], ...format });
        },
        (error) => classifyOpenAIError(error, Date.now()),
        { maxRetries: retries, initialDelayMs: 200, maxDelayMs: 5_000 },
        { sleep: realSleep },
      ),
    );
    const text = reply.choices[0]?.message?.content ?? '';
    const score = structured ? structuredScore(text) : parseJudgeScore(text);
    if (score === null || score < min || score > max) {
      const expected = structured ? '{"reason": …, "score": N}' : '"Score: N"';
      throw new TurnwiseError(`llm-judge at ${endpoint}: expected a score in [${min}, ${max}] (${expected}), got ${JSON.stringify(text.slice(0, 200))}`);
    }
    return ((score - min) / (max - min)) * weight;
  }
}
