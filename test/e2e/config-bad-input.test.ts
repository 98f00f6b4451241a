/**
 * The bad-input suite of the config loader: each bad YAML file is refused with an
 * `InvalidConfigError` naming the field at fault, the process's memory grows by a bounded amount
 * (a config that asks for too much is refused from its estimate, before anything is allocated), no
 * run folder is left behind, and a good config still loads and passes afterwards.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseConfig, resolveConfig } from '../../src/core/config.js';
import { InvalidArgumentError, InvalidConfigError } from '../../src/core/errors.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { selectBackend } from '../../src/backend/select.js';
import { checkRunMemory, estimateRunMemory, memoryLimitsOf, ROLLOUT_BYTES_PER_TOKEN } from '../../src/runtime/run-memory.js';
import { gradientWorkersOf } from '../../src/runtime/gradient-workers.js';
import { trainRun } from '../../src/runtime/train/train-run.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-config-bad-'));
const runs = join(dir, 'runs');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(async () => {
  await selectBackend('wasm'); // loaded once, so its heap is not counted against a case
});

const resident = () => process.memoryUsage().rss;
const MAX_GROWTH = 64 * 2 ** 20;
const GOOD = `run: { dir: ${runs}, name: good }\nenv: { name: babyai, settings: { levels: [GoToRedBall] } }\ntrain: { steps: 1, evalEvery: 0 }\n`;

function write(name: string, text: string): string {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, text);
  return path;
}

/** The field and detail of the error `run` throws, which must name its field (InvalidConfigError, or InvalidArgumentError for a registry lookup). */
async function refusal(run: () => unknown): Promise<{ path: string; detail: string }> {
  try {
    await run();
  } catch (error) {
    if (error instanceof InvalidConfigError) return { path: error.path, detail: error.detail };
    if (error instanceof InvalidArgumentError) return { path: error.property, detail: error.detail };
    throw error;
  }
  throw new Error('expected a refusal naming its field');
}

function expectGoodStillLoads(): void {
  const config = resolveConfig(loadConfig(write('good', GOOD)));
  expect(checkRunMemory(config, memoryLimitsOf('wasm'))).toMatch(/^memory needed: about \d+ MiB/);
}

interface Case {
  readonly name: string;
  readonly yaml: string;
  readonly path: string;
  readonly message: RegExp;
  /** Refused when the run starts (trainRun), not when the file is read. */
  readonly atStart?: boolean;
}

const CASES: Case[] = [
  { name: 'an empty file', yaml: '', path: '<root>', message: /is empty; write the sections to set .* or \{\} to train every default/ },
  { name: 'a file of comments only', yaml: '# todo\n', path: '<root>', message: /is empty/ },
  { name: 'a YAML list', yaml: '- a\n- b\n', path: '<root>', message: /expected object/ },
  { name: 'a YAML syntax error', yaml: 'model: { dModel: 64\n', path: '<root>', message: /YAML syntax error in .* at line/ },
  { name: 'a misspelt section key', yaml: 'algoritm: { lr: 1 }\n', path: 'algoritm', message: /algoritm/ },
  { name: 'a string where a number goes', yaml: 'model: { dModel: "64" }\n', path: 'model.dModel', message: /expected number, got string/ },
  { name: 'a run.name that climbs out of run.dir', yaml: 'run: { name: "../../x" }\n', path: 'run.name', message: /expected a file name .* no "\/" or "\.\."/ },
  { name: 'a run.name with a separator', yaml: 'run: { name: "a/b" }\n', path: 'run.name', message: /expected a file name/ },
  { name: 'a run.name of ..', yaml: 'run: { name: ".." }\n', path: 'run.name', message: /expected a file name/ },
  { name: 'an absolute run.name', yaml: 'run: { name: /etc/x }\n', path: 'run.name', message: /expected a file name/ },
  { name: 'a hidden run.name', yaml: 'run: { name: .x }\n', path: 'run.name', message: /starting with a letter or digit/ },
  { name: 'a run.name over 128 characters', yaml: `run: { name: ${'a'.repeat(129)} }\n`, path: 'run.name', message: /at most 128|<=128/ },
  { name: 'a misspelt env.settings key', yaml: 'env: { name: babyai, settings: { level: [GoToRedBall] } }\n', path: 'env.settings', message: /Unrecognized key: "level"/, atStart: true },
  { name: 'an unknown environment', yaml: 'env: { name: babyia }\n', path: 'env.name', message: /unknown environment "babyia"; valid: .*babyai/, atStart: true },
  { name: 'runtime.bus nats without a server', yaml: 'runtime: { bus: nats }\n', path: 'runtime.bus', message: /'nats' needs a NATS server: start the run with --nats <url>/, atStart: true },
  { name: 'a model width of 2^20', yaml: 'model: { dModel: 1048576 }\n', path: 'model.dModel', message: /the model needs about [\d.]+ GiB of tensor memory \(weights .*; from model\.dModel 1048576/, atStart: true },
  { name: 'a context of 1e8 tokens', yaml: 'model: { maxContext: 100000000 }\n', path: 'model.maxContext', message: /activations [\d.]+ GiB.*model\.maxContext 100000000/, atStart: true },
  { name: 'a group size of 1e8', yaml: 'algorithm: { groupSize: 100000000 }\n', path: 'algorithm.groupSize', message: /more than this machine's [\d.]+ GiB of memory: .*rollout [\d.]+ GiB \(algorithm\.tasksPerStep 8 x algorithm\.groupSize 100000000 episodes/, atStart: true },
  { name: '1e7 tasks per step', yaml: 'algorithm: { tasksPerStep: 10000000 }\n', path: 'algorithm.groupSize', message: /algorithm\.tasksPerStep 10000000 x algorithm\.groupSize 8/, atStart: true },
  // KV caches are JS memory outside the tensor heap: a budget past any machine's memory is refused.
  { name: 'a 16 TiB KV-cache budget', yaml: 'runtime: { kvCacheMiB: 16777216 }\n', path: 'runtime.kvCacheMiB', message: /more than this machine's [\d.]+ GiB of memory: .*KV caches 16384\.00 GiB outside the heap/, atStart: true },
];

describe('config loader: bad input', () => {
  for (const c of CASES) {
    it(`refuses ${c.name}, naming ${c.path}, with bounded memory and no run folder, and a good config still loads`, async () => {
      const file = write(c.name.replace(/\W+/g, '-'), c.yaml);
      const before = resident();
      const error = await refusal(async () => {
        const config = resolveConfig(loadConfig(file));
        if (!c.atStart) throw new Error(`${c.name} was accepted by the loader`);
        await trainRun({ config, runDir: join(runs, 'bad') });
      });
      expect(error.path).toBe(c.path);
      expect(error.detail).toMatch(c.message);
      expect(resident() - before).toBeLessThan(MAX_GROWTH);
      expect(existsSync(join(runs, 'bad'))).toBe(false);
      expectGoodStillLoads();
    }, 30_000);
  }

  it('refuses unknown env.settings keys for every built-in environment', () => {
    for (const name of ['babyai', 'textcraft', 'maze', 'wordle', 'sokoban', 'frozenlake', 'sql', 'deepsearch']) {
      const spec = getEnvironmentSpec(name);
      const error = (() => {
        try {
          spec.catalog({ settings: { level: ['GoToRedBall'] } });
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(error, name).toBeInstanceOf(InvalidConfigError);
      expect((error as InvalidConfigError).path, name).toBe('env.settings');
      expect((error as InvalidConfigError).detail, name).toMatch(/Unrecognized key: "level"/);
    }
  });

  it('estimates the rollout from the fields it names', () => {
    const config = resolveConfig(parseConfig({ algorithm: { tasksPerStep: 4, groupSize: 2, miniBatches: 1 }, horizon: { schedule: 'fixed', horizon: 3 }, model: { maxContext: 128 } }));
    expect(estimateRunMemory(config).rollout).toBe(4 * 2 * 3 * 128 * ROLLOUT_BYTES_PER_TOKEN);
    const overlapping = resolveConfig(parseConfig({ mode: 'async', algorithm: { tasksPerStep: 4, groupSize: 2, miniBatches: 1 }, horizon: { schedule: 'fixed', horizon: 3 }, model: { maxContext: 128 } }));
    expect(estimateRunMemory(overlapping).rollout).toBe(2 * 4 * 2 * 3 * 128 * ROLLOUT_BYTES_PER_TOKEN);
  });

  it('counts a weight copy per further inference and gradient worker', () => {
    const one = estimateRunMemory(resolveConfig(parseConfig({ runtime: { inferenceWorkers: 1 }, train: { dataParallel: 1 } })));
    const many = estimateRunMemory(resolveConfig(parseConfig({ runtime: { inferenceWorkers: 3 }, train: { dataParallel: 2 } })));
    expect(one.replicas).toBe(0);
    expect(many.replicas).toBe(3 * (many.models?.weights ?? Number.NaN));
    expect(many.total - one.total).toBe(many.replicas + many.evaluation - one.evaluation);
    // The evaluation's own sampler (train.evalOverlap, on by default): a copy per inference worker and a KV-cache budget.
    expect(many.evaluation).toBe(3 * (many.models?.weights ?? Number.NaN) + 128 * 2 ** 20);
    expect(estimateRunMemory(resolveConfig(parseConfig({ train: { evalOverlap: false } }))).evaluation).toBe(0);
    // The default (auto) counts the gradient workers it resolves to on this machine.
    const auto = resolveConfig(parseConfig({ runtime: { inferenceWorkers: 1 } }));
    expect(estimateRunMemory(auto).replicas).toBe((gradientWorkersOf(auto).count - 1) * (many.models?.weights ?? Number.NaN));
  });

  it('refuses against the wasm heap what the machine would hold, and against the machine what no backend would', () => {
    const wide = resolveConfig(parseConfig({ model: { dModel: 8192, nHeads: 4, ffnHidden: 8192, nLayers: 4 } }));
    const model = estimateRunMemory(wide).models?.total ?? 0;
    expect(model).toBeGreaterThan(4 * 2 ** 30);
    expect(() => checkRunMemory(wide, { tensorBytes: 4 * 2 ** 30, machineBytes: 2 * model })).toThrow(/more than the wasm backend's 4\.00 GiB heap/);
    expect(checkRunMemory(wide, { tensorBytes: null, machineBytes: 2 * model })).toMatch(/^memory needed/);
    expect(() => checkRunMemory(wide, { tensorBytes: null, machineBytes: model / 2 })).toThrow(/more than this machine's/);
  });

  it('leaves the runs folder empty after all the refusals', () => {
    expect(existsSync(runs) ? readdirSync(runs) : []).toEqual([]);
  });
});
