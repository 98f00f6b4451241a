import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readmeSections, replaceSections } from '../../src/cli/readme-sections.js';

describe('README', () => {
  it('carries the current generated tables (config fields, metrics, environments) — run `npm run docs` if this fails', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(replaceSections(readme, readmeSections())).toBe(readme);
  });

  it('names the two commands: train on the embedded default, and the whole test suite', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    expect(readme).toContain('npm install && npm run turnwise -- train configs/babyai-grpo.yaml');
    expect(readme).toContain('npm test');
  });
});
