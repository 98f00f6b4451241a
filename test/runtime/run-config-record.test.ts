/**
 * What a run folder's config.json records: every field in force, and for a pretrained model
 * (`model.from`) not the own-model shape and tokenizer it never used.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PRETRAINED_OWNS, parseConfig, resolveConfig } from '../../src/core/config.js';
import { loadRunConfig, saveRunConfig } from '../../src/runtime/run-folder.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-run-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const recorded = (runDir: string): { model: Record<string, unknown>; tokenizer?: unknown } => JSON.parse(readFileSync(join(runDir, 'config.json'), 'utf8'));

describe('the config a run folder records', () => {
  it("leaves out a pretrained run's unused own-model shape and tokenizer, and reads back the same config", async () => {
    const config = resolveConfig(parseConfig({ model: { from: 'models/SmolLM2-135M-Instruct', maxContext: 1024, lora: { rank: 8 } } }));
    const runDir = join(dir, 'pretrained');
    mkdirSync(runDir);
    await saveRunConfig(runDir, config);
    const saved = recorded(runDir);
    for (const key of PRETRAINED_OWNS) expect(saved.model).not.toHaveProperty(key);
    expect(saved).not.toHaveProperty('tokenizer');
    expect(saved.model.maxContext).toBe(1024);
    expect(saved.model.from).toBe('models/SmolLM2-135M-Instruct');
    const back = await loadRunConfig(runDir);
    expect(back.model.lora).toEqual(config.model.lora);
    expect(back.algorithm).toEqual(config.algorithm);
  });

  it("keeps turnwise's own model's shape and tokenizer", async () => {
    const config = resolveConfig(parseConfig({ model: { dModel: 32, nHeads: 4 } }));
    const runDir = join(dir, 'own');
    mkdirSync(runDir);
    await saveRunConfig(runDir, config);
    const saved = recorded(runDir);
    expect(saved.model.dModel).toBe(32);
    expect(saved.model.nLayers).toBe(config.model.nLayers);
    expect(saved.tokenizer).toEqual(config.tokenizer);
  });
});
