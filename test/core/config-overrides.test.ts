import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { applyOverrides, loadConfig, parseOverride } from '../../src/core/config.js';
import { InvalidConfigError } from '../../src/core/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-overrides-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'base.yaml');
writeFileSync(file, 'train: { steps: 60 }\nalgorithm: { lr: 0.001 }\n');

function configError(run: () => unknown): InvalidConfigError {
  try {
    run();
  } catch (error) {
    if (error instanceof InvalidConfigError) return error;
    throw error;
  }
  throw new Error('expected an InvalidConfigError');
}

describe('--set overrides', () => {
  it('reads values as YAML: numbers, booleans, lists, maps and plain strings', () => {
    expect(parseOverride('algorithm.lr=1e-4')).toEqual({ path: ['algorithm', 'lr'], value: 0.0001, text: 'algorithm.lr=1e-4' });
    expect(parseOverride('sampling.constrained=false').value).toBe(false);
    expect(parseOverride('env.settings.levels=[GoToRedBall, GoToLocal]').value).toEqual(['GoToRedBall', 'GoToLocal']);
    expect(parseOverride('horizon={ kind: fixed, horizon: 7 }').value).toEqual({ kind: 'fixed', horizon: 7 });
    expect(parseOverride('run.name=my run').value).toBe('my run');
    expect(parseOverride('run.name="007"').value).toBe('007');
  });

  it('rejects malformed overrides, naming what is wrong', () => {
    expect(() => parseOverride('algorithm.lr')).toThrow(/expects <key.path>=<value>/);
    expect(() => parseOverride('algorithm..lr=1')).toThrow(/'' is not a config key/);
    expect(configError(() => parseOverride('train.steps=')).path).toBe('train.steps');
    expect(() => parseOverride('train.steps=[1,')).toThrow(/not valid YAML/);
  });

  it('applies overrides in order onto a copy, creating sections, refusing to descend into a value', () => {
    const raw = { train: { steps: 60 } };
    const out = applyOverrides(raw, [parseOverride('train.steps=5'), parseOverride('train.steps=6'), parseOverride('model.dModel=32')]);
    expect(out).toEqual({ train: { steps: 6 }, model: { dModel: 32 } });
    expect(raw.train.steps).toBe(60);
    expect(configError(() => applyOverrides(raw, [parseOverride('train.steps.x=1')])).path).toBe('train.steps');
  });

  it('is validated by the config schema, and the resolved config carries the value', () => {
    const config = loadConfig(file, [parseOverride('train.steps=5'), parseOverride('algorithm.lr=3e-4')]);
    expect(config.train.steps).toBe(5);
    expect(config.algorithm.lr).toBe(3e-4);
    expect(loadConfig(file).train.steps).toBe(60);
  });

  it('names the path and the flag when the schema rejects an override', () => {
    const unknown = configError(() => loadConfig(file, [parseOverride('algorithm.lrr=1')]));
    expect(unknown.path).toBe('algorithm.lrr');
    expect(unknown.message).toMatch(/unknown key 'lrr'.*\(from --set algorithm\.lrr=1\)$/);
    const wrongType = configError(() => loadConfig(file, [parseOverride('train.steps=many')]));
    expect(wrongType.path).toBe('train.steps');
    expect(wrongType.message).toBe(`invalid config at 'train.steps': expected number, got string "many" (from --set train.steps=many)`);
  });
});
