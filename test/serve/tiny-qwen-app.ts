/**
 * The serve app over a tiny random-weight model with Qwen2.5's tokenizer and tool template (not a
 * test file itself), for the tests of grammar-constrained replies: created before a file's tests,
 * disposed with its folder after them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import { Rng } from '../../src/core/rng.js';
import { createServeApp } from '../../src/serve/app.js';
import { type LoadedModel, loadServedModel } from '../../src/serve/load-model.js';
import { QWEN25_TOKENIZER, writeTinyChatModel } from './tiny-chat-model.js';

/**
 * Registers the hooks; the returned getter gives the app once `beforeAll` has run.
 * @example const app = tinyQwenApp(21); … await app().request('/v1/chat/completions', …)
 */
export function tinyQwenApp(seed: number): () => ReturnType<typeof createServeApp> {
  const dir = mkdtempSync(join(tmpdir(), 'turnwise-tiny-qwen-'));
  let served: LoadedModel | undefined;
  let app: ReturnType<typeof createServeApp> | undefined;
  beforeAll(async () => {
    await selectBackend('wasm');
    const folder = await writeTinyChatModel(join(dir, 'qwen-tiny'), seed, { maxContext: 1024 }, QWEN25_TOKENIZER);
    served = await loadServedModel(folder, { backend: 'wasm' });
    app = createServeApp(served, { rng: Rng.fromSeed(1), wallClockMs: () => 1_700_000_000_000 });
  }, 60_000);
  afterAll(() => {
    served?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });
  return () => {
    if (app === undefined) throw new Error('tinyQwenApp: used before beforeAll ran');
    return app;
  };
}
