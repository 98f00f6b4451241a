/**
 * A structured LLM judge against a real `turnwise serve` process: the judge asks for
 * `{"reason", "score"}` with `response_format: json_schema`, the server keeps the reply to the
 * schema, so even a model with random weights (Qwen2.5's tokenizer and template) answers every
 * turn with a score in range; the same judge unstructured (a "Score: N" line) gets none it can read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import { judgeReplySchema, LlmJudge, llmJudgeSettingsSchema } from '../../src/policies/llm-judge.js';
import type { WatchedProcess } from '../helpers/child-process.js';
import { startServe } from '../helpers/serve-process.js';
import { QWEN25_TOKENIZER, writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-judge-json-'));
let served: WatchedProcess;
let endpoint: string;

beforeAll(async () => {
  await selectBackend('wasm'); // the tiny model's weights are written here
  const folder = await writeTinyChatModel(join(dir, 'qwen-tiny'), 41, { maxContext: 2048 }, QWEN25_TOKENIZER);
  ({ served, baseURL: endpoint } = await startServe(folder, 'qwen-tiny'));
}, 120_000);

afterAll(() => {
  if (served?.proc.exitCode === null) served.proc.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

const inputs = ['crane', 'slate', 'moist', 'pious', 'lymph'].map((action, i) => ({ taskId: `wordle_${i}`, history: [], observation: 'Guess the five-letter word.', action }));

describe('a structured LLM judge against turnwise serve (random-weight model)', () => {
  it('lists a small integer range in the reply schema, so the grammar bounds the score', () => {
    expect(judgeReplySchema(0, 10).properties.score).toEqual({ type: 'integer', enum: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
    expect(judgeReplySchema(0, 1.5).properties.score).toEqual({ type: 'number' });
  });

  it('scores every turn in range; unstructured, the same model gives no score', async () => {
    const settings = { endpoint, model: 'qwen-tiny', min: 1, max: 5, weight: 1, maxTokens: 400 };
    const judge = new LlmJudge(llmJudgeSettingsSchema.parse({ ...settings, structured: true }));
    const scores = await Promise.all(inputs.map((input) => judge.score(input)));
    // Scores 1..5 scaled by (s - 1) / 4.
    for (const score of scores) expect([0, 0.25, 0.5, 0.75, 1]).toContain(score);
    const free = new LlmJudge(llmJudgeSettingsSchema.parse({ ...settings, maxTokens: 40, retries: 0 }));
    const outcomes = await Promise.allSettled(inputs.map((input) => free.score(input)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(0);
  }, 120_000);
});
