import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe("train-run.ts's reading order", () => {
  it('names files that exist, from trainRun to the PPO loss, each once', () => {
    const text = readFileSync(`${root}src/runtime/train/train-run.ts`, 'utf8');
    const header = text.slice(text.indexOf('Reading order'), text.indexOf('*/'));
    const files = [...header.matchAll(/`((?!src\/)[a-z][\w-]*\/[\w/.-]+\.ts)`/g)].map((m) => m[1] as string);
    expect(files.length).toBeGreaterThanOrEqual(16);
    expect(files[0]).toBe('runtime/train/train-run.ts');
    expect(files.at(-1)).toBe('algorithms/losses.ts');
    for (const file of files) expect(existsSync(`${root}src/${file}`), `src/${file}`).toBe(true);
    expect(new Set(files).size).toBe(files.length);
  });
});
