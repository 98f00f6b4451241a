/**
 * The engine's checks and file work: adapter archives (SkyRL's layout, nesting, missing files),
 * datum validation before anything is sent, answers whose lengths do not match, a save whose
 * retry finds its own checkpoint, and what a profile refuses.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from '../../../src/core/clock.js';
import { CheckpointError, InvalidArgumentError, InvalidConfigError } from '../../../src/core/errors.js';
import { extractAdapterArchive } from '../../../src/engines/tinker/archive.js';
import { TinkerClient, TinkerModel } from '../../../src/engines/tinker/client.js';
import { TinkerProtocolError, TinkerRequestError } from '../../../src/engines/tinker/errors.js';
import { TinkerEngine } from '../../../src/engines/tinker/tinker-engine.js';
import { readAdapterFiles } from '../../../src/models/lora/peft-files.js';
import { drive, type FakeHandler, fakeFetch, json } from './helpers/fake-fetch.js';
import { skyrlArchive } from './helpers/tar.js';
import { FIXTURES } from './helpers/transcript.js';

const config = await readFile(join(FIXTURES, 'sampler-adapter/adapter_config.json'));
const weights = await readFile(join(FIXTURES, 'sampler-adapter/adapter_model.safetensors'));

async function inTemp<T>(work: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'tinker-io-'));
  try {
    return await work(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** An engine on a server that accepts a session and a model, then answers with `rest`. */
async function engineWith(rest: FakeHandler, options: Partial<Parameters<typeof TinkerEngine.open>[1]> = {}) {
  let created = false;
  const handler: FakeHandler = (request) => {
    if (request.path.endsWith('/create_session')) return json(200, { session_id: 's' });
    // The first model is m1 (request 1); later create_model calls are `rest`'s to answer.
    if (request.path.endsWith('/create_model') && created) return rest(request);
    if (request.path.endsWith('/create_model')) created = true;
    if (request.path.endsWith('/get_server_capabilities')) return json(200, { supported_models: [{ model_name: 'base', max_lora_rank: 32 }] });
    if (request.path.endsWith('/create_model')) return json(200, { model_id: 'm1', request_id: '1' });
    if (request.path.endsWith('/retrieve_future') && (request.body as { request_id: string }).request_id === '1') return json(200, { model_id: 'm1' });
    return rest(request);
  };
  const { fetch, seen } = fakeFetch(handler);
  const clock = new SimulatedClock();
  const client = new TinkerClient({ url: 'http://srv.test', heartbeatIntervalMs: 1e9, retry: { maxRetries: 2, initialDelayMs: 10 } }, { fetch, clock, env: {}, random: () => 0 });
  const engine = await drive(clock, TinkerEngine.open(client, { baseModel: 'base', lora: { rank: 8 }, ...options }));
  return { engine, clock, seen };
}

describe('adapter archives', () => {
  it("extracts SkyRL's archive (a '/' entry first) into PEFT files turnwise's reader loads, with the seven target modules", async () => {
    await inTemp(async (dir) => {
      await extractAdapterArchive(skyrlArchive([{ path: 'adapter_config.json', data: config }, { path: 'adapter_model.safetensors', data: weights }]), join(dir, 'adapter'), 'tinker://m/final');
      const files = await readAdapterFiles(join(dir, 'adapter'));
      expect(files.spec.rank).toBe(8);
      expect(files.spec.alpha).toBe(32);
      expect([...files.spec.targets].sort()).toEqual(['down_proj', 'gate_proj', 'k_proj', 'o_proj', 'q_proj', 'up_proj', 'v_proj']);
      expect(files.weights.size).toBe(28);
    });
  });

  it('finds the files under a nested folder and ignores links and unrelated members', async () => {
    await inTemp(async (dir) => {
      const archive = skyrlArchive(
        [
          { path: 'ckpt', type: 'Directory' },
          { path: 'ckpt/README.md', data: Buffer.from('hello') },
          { path: 'ckpt/adapter_config.json', data: config },
          { path: 'ckpt/adapter_model.safetensors', data: weights },
          { path: 'ckpt/link', type: 'SymbolicLink', linkpath: '/etc/passwd' },
        ],
        { rootEntry: false },
      );
      await extractAdapterArchive(archive, join(dir, 'out'), 'x');
      expect(new Uint8Array(await readFile(join(dir, 'out/adapter_model.safetensors')))).toEqual(new Uint8Array(weights));
    });
  });

  it('names what is missing, and refuses what is not an archive', async () => {
    await inTemp(async (dir) => {
      await expect(extractAdapterArchive(skyrlArchive([{ path: 'adapter_config.json', data: config }]), join(dir, 'a'), 'tinker://m/x')).rejects.toThrow(
        new CheckpointError('tinker://m/x', "the archive has no 'adapter_model.safetensors' (found: adapter_config.json)"),
      );
      await expect(extractAdapterArchive(new TextEncoder().encode('<html>login</html>'), join(dir, 'b'), 'tinker://m/y')).rejects.toThrow(CheckpointError);
    });
  });
});

describe('TinkerEngine checks', () => {
  it('refuses data whose arrays differ in length, or a policy-gradient loss without its inputs, before sending anything', async () => {
    const { engine, seen } = await engineWith(() => json(500, {}));
    const before = seen.length;
    const datum = { inputTokens: Int32Array.of(1, 2, 3), targetTokens: Int32Array.of(2, 3), weights: Float32Array.of(1, 1, 1) };
    await expect(engine.forward([datum], 'cross_entropy')).rejects.toThrow(new InvalidArgumentError('data[0].targetTokens', "expected 3 values (the input's length), got 2"));
    const ok = { ...datum, targetTokens: Int32Array.of(2, 3, 4) };
    await expect(engine.forwardBackward([ok], 'ppo')).rejects.toThrow(/data\[0\]\.samplingLogprobs.*'ppo' needs/);
    expect(seen.length).toBe(before);
  });

  it('refuses an answer whose log-probs do not match the input length, naming the call and field', async () => {
    const { engine, clock } = await engineWith((request) =>
      request.path.endsWith('/forward') ? json(200, { request_id: '2' }) : json(200, { loss_fn_output_type: 'scalar', loss_fn_outputs: [{ logprobs: { data: [-1, -2], dtype: 'float32', shape: [2] } }], metrics: {} }),
    );
    const datum = { inputTokens: Int32Array.of(1, 2, 3), targetTokens: Int32Array.of(2, 3, 4), weights: Float32Array.of(1, 1, 1) };
    const error = await drive(clock, engine.forward([datum], 'cross_entropy')).catch((e) => e);
    expect(error).toBeInstanceOf(TinkerProtocolError);
    expect(error.message).toMatch(/'forward' at http:\/\/srv\.test answered a body turnwise cannot read at 'loss_fn_outputs\[0\]\.logprobs'/);
  });

  it("refuses a base model the server does not offer, and a rank above the server's", async () => {
    await expect(engineWith(() => json(500, {}), { baseModel: 'other' })).rejects.toThrow(/model\.tinker\.baseModel.*does not offer "other"; it offers "base"/);
    await expect(engineWith(() => json(500, {}), { lora: { rank: 64 } })).rejects.toThrow(new InvalidConfigError('model.lora.rank', 'http://srv.test takes LoRA ranks up to 32, got 64'));
  });

  it("refuses a loss or a gradient clip the server's profile does not offer", async () => {
    const { engine } = await engineWith(() => json(500, {}), { server: 'skyrl' });
    const datum = { inputTokens: Int32Array.of(1), targetTokens: Int32Array.of(2), weights: Float32Array.of(1), samplingLogprobs: Float32Array.of(-1), advantages: Float32Array.of(1) };
    await expect(engine.forwardBackward([datum], 'dro')).rejects.toThrow(/does not offer 'dro'/);
    await expect(engine.optimStep({ learningRate: 1e-4, beta1: 0.9, beta2: 0.95, eps: 1e-12, weightDecay: 0, gradClipNorm: 1 })).rejects.toThrow(/gradClipNorm.*does not clip gradients/);
  });

  it('recovers a save whose first attempt reached the server but lost its answer (the retry gets 409), and not a real clash', async () => {
    let saves = 0;
    const { engine, clock } = await engineWith((request) => {
      if (request.path.endsWith('/save_weights_for_sampler')) {
        saves++;
        return saves === 1 ? 'drop' : json(409, { detail: "Checkpoint 'step-1' already exists for model 'm1'" });
      }
      if (request.path.endsWith('/checkpoints')) return json(200, { checkpoints: [{ checkpoint_id: 'step-1', checkpoint_type: 'sampler', time: 't', tinker_path: 'tinker://m1/sampler_weights/step-1' }] });
      return json(500, {});
    });
    expect(await drive(clock, engine.saveWeightsForSampler('step-1'))).toEqual({ path: 'tinker://m1/sampler_weights/step-1' });
    // A first attempt answered 409: the name is taken by something else.
    const error = await drive(clock, engine.saveWeightsForSampler('step-1')).catch((e) => e);
    expect(error).toBeInstanceOf(TinkerRequestError);
    expect(error.status).toBe(409);
  });

  it('resumes into a fresh model when the bound one has already worked (servers load only into a new model)', async () => {
    let models = 0;
    const { engine, clock, seen } = await engineWith((request) => {
      const body = request.body as Record<string, unknown>;
      if (request.path.endsWith('/create_model')) return json(200, { model_id: `m${++models + 1}`, request_id: '5' });
      if (request.path.endsWith('/save_weights')) return json(200, { request_id: '3' });
      if (request.path.endsWith('/load_weights') || request.path.endsWith('/unload_model')) return json(200, { request_id: '4' });
      const id = body.request_id;
      // As hosted Tinker and turnwise tinker serve answer it (SkyRL leaves the type out).
      if (id === '3') return json(200, { path: 'tinker://m1/weights/s1', type: 'save_weights' });
      if (id === '5') return json(200, { model_id: 'm2' });
      return json(200, { type: 'load_weights' });
    });
    const path = await drive(clock, engine.saveState('s1'));
    await drive(clock, engine.loadState(path, { optimizer: true }));
    expect(engine.modelId).toBe('m2');
    const load = seen.find((r) => r.path.endsWith('/load_weights'));
    expect(load?.body).toEqual({ model_id: 'm2', seq_id: 1, path: 'tinker://m1/weights/s1', optimizer: true });
    expect(seen.find((r) => r.path.endsWith('/unload_model'))?.body).toEqual({ model_id: 'm1' });
  });
});

describe('closing the engine', () => {
  it('takes a model the server no longer has (404 on unload) as unloaded, and reports any other failure', async () => {
    const gone = await engineWith((request) => (request.path.endsWith('/unload_model') ? json(404, { detail: 'Model not found' }) : json(500, {})));
    await expect(drive(gone.clock, gone.engine.close())).resolves.toBeUndefined();
    const refused = await engineWith((request) => (request.path.endsWith('/unload_model') ? json(403, { detail: 'not yours' }) : json(500, {})));
    await expect(drive(refused.clock, refused.engine.close())).rejects.toThrow(/unload_model.*403/);
  });
});

describe('TinkerModel', () => {
  it('starts seq_ids at 1', () => {
    expect(new TinkerModel('m', 'b').nextSeqId).toBe(1);
  });
});
