import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { configMarkdownTable, describeConfig, loadConfig, parseConfig, resolveConfig } from '../../src/core/config.js';
import { InvalidConfigError } from '../../src/core/errors.js';

function errorOf(fn: () => unknown): InvalidConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof InvalidConfigError) return error;
    throw error;
  }
  throw new Error('expected an InvalidConfigError');
}

describe('parseConfig', () => {
  it('fills in every default from an empty object', () => {
    const config = parseConfig({});
    expect(config).toEqual({
      seed: 1,
      run: { dir: 'runs', name: 'babyai-grpo' },
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] }, trainSplit: 'train', testSplit: 'test', workers: 0 },
      tokenizer: { vocabSize: 512, corpusEpisodes: 400 },
      model: { from: null, engine: 'local', tinker: null, lora: null, dModel: 64, nLayers: 2, nHeads: 4, ffnHidden: 172, maxContext: 256, ropeTheta: 10000, tieEmbeddings: false, backend: 'auto', matmul: 'auto' },
      context: {
        format: 'auto',
        chat: { system: null, acknowledge: "OK. I'll follow your instructions and try my best to solve the task.", maxResponseTokens: 8192 },
        actions: 'auto',
        history: 'auto',
        includeInstruction: false,
      },
      sampling: { temperature: 1, topP: 1, maxActionTokens: 24, constrained: true },
      algorithm: {
        name: 'grpo',
        groupSize: 8,
        tasksPerStep: 8,
        normalizeStd: true,
        lr: 0.001,
        beta1: 0.9,
        beta2: 0.99,
        clipRatio: 0.2,
        klCoef: 0,
        entropyCoef: 0,
        gradClip: 1,
        epochs: 1,
        miniBatches: 1,
        maxTokensPerMicroBatch: 8192,
        microBatchMultiple: 'auto',
        dropZeroAdvantage: true,
        weightDecay: 0,
        lrSchedule: 'constant',
        warmupSteps: 0,
        minLrRatio: 0,
        dualClip: null,
        lossAgg: 'token-mean',
        klEstimator: 'k3',
        klPlacement: 'loss',
        klTarget: null,
        klHorizon: 10000,
        policyLoss: 'ppo-clip',
        policyLossSettings: {},
        credit: 'trajectory',
      },
      reward: { mode: 'outcome', shaper: null, settings: {} },
      horizon: { schedule: 'fixed', horizon: 5 },
      train: { steps: 60, evalEvery: 10, evalTasks: 256, checkpointEvery: 10, logEvery: 1, dataParallel: 'auto', evalOverlap: true, export: 'none' },
      runtime: { bus: 'memory', samplerMaxBatch: 128, samplerMaxWaitMs: 2, requestTimeoutMs: 60000, envTimeoutMs: 30000, kvCacheMiB: 128, inferenceWorkers: 'auto' },
      mode: 'sync',
      async: { maxStaleness: 1, partialRollout: 'continue', weightSyncTimeoutMs: 120000 },
      offPolicy: { correction: 'none', cap: 2 },
      alarms: {
        cooldown: 10,
        lowerHorizonBy: 2,
        entropyCollapse: { enabled: true, window: 3, ratio: 0.1, below: null, action: 'warn' },
        rewardVariance: { enabled: true, window: 3, above: 0.8, ignoreSolved: true, action: 'warn' },
        echoTrap: { enabled: true, window: 5, similarityAbove: 0.8, minRise: 0.05, action: 'warn' },
        gradNormSpike: { enabled: true, window: 10, factor: 5, action: 'warn' },
        klBlowUp: { enabled: true, approxKlAbove: 0.1, klRefAbove: 0.5, action: 'warn' },
      },
    });
    expect(() => parseConfig(null)).toThrow("invalid config at '<root>': the config is empty");
  });

  it('keeps given values and defaults the rest of the section', () => {
    const config = parseConfig({ algorithm: { lr: 3e-4 }, context: { history: 'full' } });
    expect(config.algorithm.lr).toBe(3e-4);
    expect(config.algorithm.groupSize).toBe(8);
    expect(config.context.history).toBe('full');
  });

  it('rejects an unknown nested key, naming it and listing the valid keys', () => {
    const error = errorOf(() => parseConfig({ algorithm: { foo: 1 } }));
    expect(error.path).toBe('algorithm.foo');
    expect(error.detail).toContain("unknown key 'foo'");
    expect(error.detail).toContain('valid keys: name, groupSize, tasksPerStep, normalizeStd, lr,');
    expect(error.message).toMatch(/^invalid config at 'algorithm\.foo'/);
  });

  it('rejects an unknown top-level key', () => {
    const error = errorOf(() => parseConfig({ algorithms: {} }));
    expect(error.path).toBe('algorithms');
    expect(error.detail).toContain('valid keys: seed, run, env,');
  });

  it('names the path and the expected type of a wrong value', () => {
    const error = errorOf(() => parseConfig({ algorithm: { lr: 'fast' } }));
    expect(error.path).toBe('algorithm.lr');
    expect(error.detail).toBe('expected number, got string "fast"');
    const range = errorOf(() => parseConfig({ algorithm: { lr: -1 } }));
    expect(range.path).toBe('algorithm.lr');
    expect(range.detail).toBe('expected number to be >0, got number -1');
    const choice = errorOf(() => parseConfig({ model: { backend: 'gpu' } }));
    expect(choice.path).toBe('model.backend');
    expect(choice.detail).toBe("expected one of 'auto' | 'tensorflow' | 'wasm' | 'cpu', got string \"gpu\"");
    const history = errorOf(() => parseConfig({ context: { history: 'all' } }));
    expect(history.path).toBe('context.history');
    expect(history.detail).toContain("expected a non-negative integer, 'full' or 'auto'");
  });

  it('reports every problem, the first as the path', () => {
    const error = errorOf(() => parseConfig({ seed: 'x', train: { steps: 0 } }));
    expect(error.path).toBe('seed');
    expect(error.detail).toContain("also 'train.steps'");
  });

  it('accepts both horizon schedules', () => {
    expect(parseConfig({ horizon: { schedule: 'fixed' } }).horizon).toEqual({ schedule: 'fixed', horizon: 5 });
    const stepwise = parseConfig({ horizon: { schedule: 'stepwise', horizons: [5, 8, 10], every: 20 } });
    expect(stepwise.horizon).toEqual({ schedule: 'stepwise', horizons: [5, 8, 10], every: 20 });
  });

  it('explains horizon union errors', () => {
    const tag = errorOf(() => parseConfig({ horizon: { schedule: 'exponential' } }));
    expect(tag.path).toBe('horizon.schedule');
    expect(tag.detail).toBe("expected one of 'fixed' | 'stepwise' | 'linear' | 'adaptive' | 'per-env', got string \"exponential\"");
    const empty = errorOf(() => parseConfig({ horizon: { schedule: 'stepwise', horizons: [], every: 10 } }));
    expect(empty.path).toBe('horizon.horizons');
    expect(empty.detail).toContain('>=1 items');
    const bad = errorOf(() => parseConfig({ horizon: { schedule: 'stepwise', horizons: [5, 2.5], every: 10 } }));
    expect(bad.path).toBe('horizon.horizons[1]');
    const missing = errorOf(() => parseConfig({ horizon: { schedule: 'stepwise', horizons: [5] } }));
    expect(missing.path).toBe('horizon.every');
    expect(missing.detail).toBe('required field is missing (expected number)');
    const mixed = errorOf(() => parseConfig({ horizon: { schedule: 'fixed', horizons: [5] } }));
    expect(mixed.path).toBe('horizon.horizons');
    expect(mixed.detail).toBe("unknown key 'horizons'; valid keys: schedule, horizon, evalHorizon");
  });

  it('refuses shape and tokenizer fields next to model.from, and LoRA or chat without it', () => {
    expect(errorOf(() => parseConfig({ model: { from: 'models/x', dModel: 128 } })).path).toBe('model.dModel');
    expect(errorOf(() => parseConfig({ model: { from: 'models/x' }, tokenizer: { vocabSize: 1024 } })).path).toBe('tokenizer');
    expect(errorOf(() => parseConfig({ model: { lora: { rank: 8 } } })).path).toBe('model.lora');
    expect(errorOf(() => parseConfig({ context: { format: 'chat' } })).path).toBe('context.format');
    expect(errorOf(() => parseConfig({ context: { actions: 'listed' }, sampling: { constrained: false } })).path).toBe('context.actions');
    expect(errorOf(() => parseConfig({ context: { actions: 'calls' } })).path).toBe('context.actions');
    const ok = parseConfig({ model: { from: 'models/x', lora: { rank: 8, targetModules: ['q_proj', 'v_proj'] }, maxContext: 2048 } });
    expect(ok.model.lora).toEqual({ rank: 8, alpha: 32, dropout: 0.05, targetModules: ['q_proj', 'v_proj'], rsLora: false });
  });

  it('checks fields that depend on each other', () => {
    expect(errorOf(() => parseConfig({ model: { dModel: 64, nHeads: 5 } })).path).toBe('model.nHeads');
    expect(errorOf(() => parseConfig({ sampling: { maxActionTokens: 300 } })).path).toBe('sampling.maxActionTokens');
    const mini = errorOf(() => parseConfig({ algorithm: { miniBatches: 3 } }));
    expect(mini.path).toBe('algorithm.miniBatches');
    expect(mini.detail).toContain('= 64');
  });

  it('rejects a config that is not an object', () => {
    expect(errorOf(() => parseConfig(5)).path).toBe('<root>');
  });
});

describe('loadConfig', () => {
  const dir = mkdtempSync(join(tmpdir(), 'turnwise-config-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads a YAML file', () => {
    const file = join(dir, 'ok.yaml');
    writeFileSync(file, 'seed: 7\nalgorithm:\n  groupSize: 4\nhorizon:\n  schedule: stepwise\n  horizons: [3, 6]\n  every: 15\n');
    const config = loadConfig(file);
    expect(config.seed).toBe(7);
    expect(config.algorithm.groupSize).toBe(4);
    expect(config.horizon).toEqual({ schedule: 'stepwise', horizons: [3, 6], every: 15 });
  });

  it('refuses an empty file, and takes {} as every default', () => {
    const file = join(dir, 'empty.yaml');
    writeFileSync(file, '# nothing but a comment\n');
    expect(() => loadConfig(file)).toThrow(`invalid config at '<root>': the config ${file} is empty`);
    writeFileSync(file, '{}\n');
    expect(loadConfig(file)).toEqual(parseConfig({}));
  });

  it('names the file in validation errors', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'algorithm:\n  foo: 1\n');
    const error = errorOf(() => loadConfig(file));
    expect(error.path).toBe('algorithm.foo');
    expect(error.message).toContain(`(in ${file})`);
  });

  it('reports YAML syntax errors with the line', () => {
    const file = join(dir, 'syntax.yaml');
    writeFileSync(file, 'seed: 1\nalgorithm: [1, 2\n');
    expect(() => loadConfig(file)).toThrow(/YAML syntax error in .*syntax\.yaml at line \d+/);
  });

  it('reports a missing file', () => {
    expect(() => loadConfig(join(dir, 'nope.yaml'))).toThrow(/cannot read config file/);
  });
});

describe('resolveConfig', () => {
  it('computes derived values once and freezes everything', () => {
    const parsed = parseConfig({ algorithm: { groupSize: 4, tasksPerStep: 6, miniBatches: 2, epochs: 2 }, train: { steps: 25 } });
    const config = resolveConfig(parsed);
    expect(config.derived).toEqual({
      episodesPerStep: 24,
      totalTrainEpisodes: 600,
      episodesPerMiniBatch: 12,
      updatesPerStep: 4,
      headDim: 16,
      horizonStages: [5],
      maxHorizon: 5,
      evalSteps: [10, 20],
      runDir: join('runs', 'babyai-grpo'),
    });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.algorithm)).toBe(true);
    expect(Object.isFrozen(config.derived.horizonStages)).toBe(true);
    expect(() => {
      (config.algorithm as { lr: number }).lr = 1;
    }).toThrow(TypeError);
    expect(Object.isFrozen(parsed)).toBe(false);
  });

  it('takes the largest stage of a stepwise schedule', () => {
    const config = resolveConfig(parseConfig({ horizon: { schedule: 'stepwise', horizons: [5, 10, 8], every: 10 }, train: { evalEvery: 0 } }));
    expect(config.derived.maxHorizon).toBe(10);
    expect(config.derived.horizonStages).toEqual([5, 10, 8]);
    expect(config.derived.evalSteps).toEqual([]);
  });
});

describe('describeConfig', () => {
  it("gives another environment named without settings {} instead of BabyAI's default settings", () => {
    expect(parseConfig({ env: { name: 'maze' } }).env.settings).toEqual({});
    expect(parseConfig({ env: { name: 'babyai' } }).env.settings).toEqual({ levels: ['GoToRedBall'] });
    expect(parseConfig({}).env.settings).toEqual({ levels: ['GoToRedBall'] });
    expect(parseConfig({ env: { name: 'maze', settings: { layout: 'random' } } }).env.settings).toEqual({ layout: 'random' });
  });

  it('lists every field with a description and its default', () => {
    const fields = describeConfig();
    for (const field of fields) expect(field.description, field.path).not.toBe('');
    const byPath = new Map(fields.map((f) => [f.path, f]));
    expect(byPath.get('algorithm.lr')).toMatchObject({ type: 'number > 0', default: 0.001 });
    expect(byPath.get('model.backend')).toMatchObject({ type: "'auto' | 'tensorflow' | 'wasm' | 'cpu'", default: 'auto' });
    expect(byPath.get('model.matmul')).toMatchObject({ type: "'auto' | 'native' | 'wasm'", default: 'auto' });
    expect(byPath.get('algorithm.microBatchMultiple')).toMatchObject({ type: "integer > 0 | 'auto'", default: 'auto' });
    expect(byPath.get('context.history')?.type).toBe("integer >= 0 | 'full' | 'auto'");
    expect(byPath.get('horizon.schedule')).toMatchObject({ type: "'fixed' | 'stepwise' | 'linear' | 'adaptive' | 'per-env'", default: 'fixed' });
    expect(byPath.get('horizon.horizons')).toMatchObject({ type: 'integer > 0[]', when: "schedule: 'stepwise'" });
    expect(byPath.get('horizon.every')?.default).toBeUndefined();
    expect(byPath.get('env.settings')?.default).toEqual({ levels: ['GoToRedBall'] });
    // Fields outside the union options: seed, run 2, env 5, tokenizer 2, model 28 (9 + from + engine + 12
    // of tinker + 5 of lora), context 7 (format, actions, history, includeInstruction, chat 3), sampling 4, algorithm 27 (name
    // + the fields every algorithm has), horizon.schedule, train 8, runtime 7, mode 1, async 3, offPolicy 2,
    // reward 3, alarms 2 + 5 + 5 + 5 + 4 + 4.
    expect(fields.filter((f) => f.when === undefined)).toHaveLength(1 + 2 + 5 + 2 + 28 + 7 + 4 + 27 + 1 + 8 + 7 + 1 + 3 + 2 + 3 + 25);
    expect(byPath.get('model.from')).toMatchObject({ default: null });
    // Optional without a default (the schedule decides), unlike fields a schedule requires.
    expect(byPath.get('horizon.evalHorizon')).toMatchObject({ optional: true });
    expect(byPath.get('horizon.horizons')?.optional).toBeUndefined();
    expect(configMarkdownTable()).toMatch(/\| `horizon.evalHorizon` \| integer > 0 \| optional \|/);
    expect(byPath.get('model.lora.rank')).toMatchObject({ default: 16 });
    expect(byPath.get('context.chat.maxResponseTokens')).toMatchObject({ default: 8192 });
    expect(byPath.get('algorithm.name')).toMatchObject({ type: "'grpo' | 'rloo' | 'reinforce_pp' | 'reinforce' | 'ppo'", default: 'grpo' });
    expect(byPath.get('algorithm.critic.lr')).toMatchObject({ when: "name: 'ppo'" });
    const horizonOptions = fields.filter((f) => f.when !== undefined && !f.path.startsWith('algorithm.'));
    expect(horizonOptions.every((f) => f.path.startsWith('horizon.'))).toBe(true);
    expect(horizonOptions.filter((f) => f.when === "schedule: 'stepwise'").map((f) => f.path)).toEqual(['horizon.horizons', 'horizon.every', 'horizon.evalHorizon']);
    expect(horizonOptions.filter((f) => f.when === "schedule: 'linear'").map((f) => f.path)).toEqual(['horizon.start', 'horizon.step', 'horizon.every', 'horizon.max', 'horizon.evalHorizon']);
  });

  it('validates alarm thresholds and actions, naming the field', () => {
    expect(errorOf(() => parseConfig({ alarms: { gradNormSpike: { factor: 1 } } })).path).toBe('alarms.gradNormSpike.factor');
    expect(errorOf(() => parseConfig({ alarms: { echoTrap: { action: 'panic' } } })).path).toBe('alarms.echoTrap.action');
    expect(errorOf(() => parseConfig({ alarms: { entropyColapse: {} } })).path).toBe('alarms.entropyColapse');
    expect(parseConfig({ alarms: { klBlowUp: { action: 'stop', klRefAbove: null } } }).alarms.klBlowUp).toEqual({ enabled: true, approxKlAbove: 0.1, klRefAbove: null, action: 'stop' });
  });

  it('checks that a shaper and mode outcome+shaped go together', () => {
    expect(errorOf(() => parseConfig({ reward: { mode: 'outcome+shaped' } })).path).toBe('reward.shaper');
    const unused = errorOf(() => parseConfig({ reward: { shaper: 'invalid-action-penalty' } }));
    expect(unused.path).toBe('reward.mode');
    expect(unused.detail).toMatch(/never trains on shaped rewards/);
    expect(errorOf(() => parseConfig({ reward: { mode: 'total' } })).path).toBe('reward.mode');
    expect(parseConfig({ reward: { mode: 'outcome+shaped', shaper: 'repeated-action-penalty', settings: { penalty: 0.05 } } }).reward.settings).toEqual({ penalty: 0.05 });
    expect(parseConfig({ algorithm: { name: 'rloo', credit: 'turn' } }).algorithm).toMatchObject({ name: 'rloo', credit: 'turn' });
    expect(errorOf(() => parseConfig({ algorithm: { name: 'reinforce_pp', credit: 'turn' } })).path).toBe('algorithm.credit');
  });

  it('renders a Markdown table', () => {
    const table = configMarkdownTable();
    expect(table.split('\n')[0]).toBe('| field | type | default | description |');
    expect(table).toContain('| `algorithm.lr` | number > 0 | `0.001` |');
  });
});
