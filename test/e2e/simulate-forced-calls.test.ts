/**
 * `turnwise simulate --policy remote:…,tool-choice=required` against a real `turnwise serve`
 * process: the server keeps each reply to the grammar of a call, so even a model with random
 * weights (Qwen2.5's tokenizer and tool template) calls the environment's tools validly at every
 * turn; the same model left to `tool-choice=auto` writes text the environment refuses.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selectBackend } from '../../src/backend/select.js';
import { parseSimulateFlags } from '../../src/cli/simulate-command.js';
import { systemClock } from '../../src/core/clock.js';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { checkToolCall, parseToolCallText } from '../../src/core/tools.js';
import { simulate } from '../../src/runtime/simulate/simulate.js';
import { startServe } from '../helpers/serve-process.js';
import { VAULT_TOOLS, vaultSpec } from '../helpers/vault-env.js';
import { QWEN25_TOKENIZER, writeTinyChatModel } from '../serve/tiny-chat-model.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-forced-calls-'));
let child: ChildProcess;
let baseURL: string;

beforeAll(async () => {
  await selectBackend('wasm'); // the tiny model's weights are written here
  const folder = await writeTinyChatModel(join(dir, 'qwen-tiny'), 31, { maxContext: 4096 }, QWEN25_TOKENIZER);
  const started = await startServe(folder, 'qwen-tiny');
  child = started.served.proc;
  baseURL = started.baseURL;
}, 120_000);

afterAll(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Plays 24 turns against the vault with the served model; returns the turns played and the action
 * text of each step that reached the environment (a reply that is no call is answered by the runner).
 */
async function play(toolChoice: 'auto' | 'required'): Promise<{ turns: number; steps: string[] }> {
  const steps: string[] = [];
  const config = resolveConfig(parseConfig({ seed: 5, horizon: { schedule: 'fixed', horizon: 3 } }));
  const policy = parseSimulateFlags({ agents: '4', policy: `remote:tiny=${baseURL},model=qwen-tiny,temperature=1,max-tokens=96,tool-choice=${toolChoice}` }).policy;
  const report = await simulate({ config, spec: vaultSpec(steps), agents: 4, policy, budget: { turns: 24 }, clock: systemClock });
  expect(report.outcomes.error).toBe(0);
  return { turns: report.turns, steps };
}

const valid = (action: string) => {
  const parsed = parseToolCallText(action);
  return parsed.ok && checkToolCall(parsed.call, VAULT_TOOLS) === null;
};

describe('forced tool calls through the remote policy and turnwise serve', () => {
  it('tool-choice=required: every turn is a valid call of the environment’s tools', async () => {
    const { turns, steps } = await play('required');
    expect(turns).toBeGreaterThanOrEqual(24);
    expect(steps).toHaveLength(turns);
    expect(steps.filter((s) => !valid(s))).toEqual([]);
  }, 120_000);

  it('tool-choice=auto: the random-weight model makes no valid call', async () => {
    const { turns, steps } = await play('auto');
    expect(turns).toBeGreaterThanOrEqual(24);
    expect(steps.filter(valid)).toEqual([]);
  }, 120_000);
});
