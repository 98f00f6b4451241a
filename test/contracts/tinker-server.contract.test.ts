/**
 * Contract: `turnwise tinker serve`, started as a process in SkyRL tx's dialect and reduction
 * (sequence-mean, tied lora_A, rank <= 8, base model named BASE_MODEL_DIR), is sent the 86
 * requests of SkyRL tx's recorded session in order (ids mapped to the ones this server hands out)
 * and must answer with the recorded statuses and shapes, the recorded numbers where they are
 * deterministic, and the documented differences where turnwise chose otherwise.
 *
 * One request is added: after create_model, `load_weights` puts SkyRL's recorded initial adapter
 * (whose lora_A SkyRL drew from JAX's PRNG) on the model — the protocol's own way to start from
 * given weights — so the recorded training steps can be replayed number for number.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readPeftAdapter, writeTrainingCheckpoint } from '../../src/engines/local/checkpoint-files.js';
import { initialAdamWState } from '../../src/engines/local/optax-adamw.js';
import { LORA_TARGETS } from '../../src/models/lora/lora.js';
import { decodeSafetensors } from '../../src/models/safetensors.js';

interface Exchange {
  method: 'GET' | 'POST';
  path: string;
  request_body: unknown;
  status: number;
  response_body: unknown;
  note: string | null;
}
const fixture = (p: string) => new URL(`../fixtures/tinker-skyrl/${p}`, import.meta.url).pathname;
const transcript: Exchange[] = readFileSync(fixture('transcript.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));

const checkpoints = mkdtempSync(join(tmpdir(), 'tinker-contract-'));
let child: ChildProcess;
let exited: Promise<unknown>;
let base = '';

beforeAll(async () => {
  // SkyRL's initial adapter as a training checkpoint of a model called `fixture` (for load_weights)
  const init = await readPeftAdapter(fixture('sampler-adapter-init'));
  const spec = { ...init.spec, sharedA: true };
  // no optimizer moments: it is loaded with optimizer: false
  await writeTrainingCheckpoint(checkpoints, 'fixture', 'skyrl-init', spec, init.weights, { adam: initialAdamWState([]), sharedA: true, rank: 8 }, 'BASE_MODEL_DIR');
  const args = ['--import', 'tsx', 'src/cli/main.ts', 'tinker', 'serve', fixture('model'), '--port', '0', '--dialect', 'skyrl', '--reduction', 'sequence-mean', '--tie-lora-a'];
  args.push('--max-lora-rank', '8', '--base-model-name', 'BASE_MODEL_DIR', '--checkpoints-dir', checkpoints, '--backend', 'wasm', '--retrieve-timeout-ms', '5000');
  child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const exit = new Promise((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal)));
  exited = exit;
  base = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /tinker API at (http:\/\/\S+\/api\/v1) /.exec(out);
      if (match) resolve(match[1] as string);
    });
    child.stderr?.on('data', (chunk: Buffer) => (out += chunk.toString()));
    void exit.then((code) => reject(new Error(`turnwise tinker serve exited ${code}: ${out}`)));
  });
}, 120_000);

afterAll(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  rmSync(checkpoints, { recursive: true, force: true });
});

describe('turnwise tinker serve on the command line', () => {
  it('exits 2 with one line naming the flag for a bad setting', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'tinker', 'serve', fixture('model'), '--reduction', 'mean'], { encoding: 'utf8' });
    expect(run.status).toBe(2);
    expect(run.stderr.trim()).toMatch(/^UsageError: --reduction must be one of sum, sequence-mean, got 'mean'$/);
  });
});

/** Every key path of `recorded` is in `ours` with the same JSON type (ours may add keys). */
function expectShapeCovers(ours: unknown, recorded: unknown, at: string): void {
  const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
  // null in a recording says nothing about the type; `url` of a 422 issue is a link to pydantic's docs
  if (recorded === null || at.endsWith('.url')) return;
  expect(kind(ours), `${at}: ${JSON.stringify(ours)?.slice(0, 120)}`).toBe(kind(recorded));
  if (at.endsWith('.metrics')) return; // metric names are each server's own
  if (Array.isArray(recorded) && Array.isArray(ours) && recorded.length > 0 && ours.length > 0) expectShapeCovers(ours[0], recorded[0], `${at}[0]`);
  else if (kind(recorded) === 'object') for (const [k, v] of Object.entries(recorded as object)) expectShapeCovers((ours as Record<string, unknown>)[k], v, `${at}.${k}`);
}

const maxDiff = (a: number[], b: number[]) => {
  expect(a.length).toBe(b.length);
  return a.reduce((m, x, i) => Math.max(m, Math.abs(x - (b[i] as number))), 0);
};
type Out = { loss_fn_outputs: Array<{ logprobs: { data: number[] }; elementwise_loss: { data: number[] } }> };
type Sampled = { sequences: Array<{ tokens: number[]; logprobs: number[]; stop_reason: string }>; prompt_logprobs: number[] | null };

/** Lines where turnwise answers otherwise, on purpose (docs/tinker-server.md says why). */
const DIVERGES: Record<number, string> = {
  56: 'a non-numeric request id is an unknown future (404), not a 500',
  67: 'a target list shorter than the input fails the future naming target_tokens (SkyRL pads it silently)',
  68: 'see 67',
  69: 'a target list longer than the input fails the future (SkyRL drops the extra silently)',
  70: 'see 69',
  77: 'a long poll that runs out (408) needs a paused engine; the in-process contract provokes it',
};

describe('turnwise tinker serve replaying SkyRL tx’s recorded session', () => {
  it('answers every request as recorded (statuses, shapes, numbers), except where documented', async () => {
    const ids = new Map<string, string>(); // recorded id -> ours
    const map = (text: string) => text.replace(/\b(session|model|sampling)_[0-9a-f]{8}\b/g, (id) => ids.get(id) ?? id);
    const mapRequestId = (body: unknown) => {
      const b = body as { request_id?: string };
      return b.request_id !== undefined ? { ...b, request_id: ids.get(`request:${b.request_id}`) ?? b.request_id } : body;
    };
    const send = async (method: string, path: string, body: unknown) => {
      const res = await fetch(`${base}${map(path).slice('/api/v1'.length)}`, { method, redirect: 'manual', ...(body === null ? {} : { body: map(JSON.stringify(body)), headers: { 'content-type': 'application/json' } }) });
      const type = res.headers.get('content-type') ?? '';
      const payload = type.includes('json') ? await res.json() : new Uint8Array(await res.arrayBuffer());
      return { status: res.status, body: payload as unknown, headers: res.headers };
    };
    const results: Record<number, unknown> = {};
    let checked = 0;
    for (const [index, e] of transcript.entries()) {
      const n = index + 1;
      if (n === 77) continue;
      const request = e.path.endsWith('retrieve_future') ? mapRequestId(e.request_body) : e.request_body;
      const got = await send(e.method, e.path, request);
      results[n] = got.body;
      const recorded = e.response_body as Record<string, unknown> | null;
      // learn the ids this server handed out
      const answer = got.body as Record<string, unknown>;
      for (const key of ['session_id', 'model_id', 'sampling_session_id'] as const) {
        if (recorded !== null && typeof recorded[key] === 'string' && typeof answer?.[key] === 'string' && !ids.has(recorded[key] as string)) ids.set(recorded[key] as string, answer[key] as string);
      }
      if (recorded !== null && typeof recorded.request_id === 'string' && typeof answer?.request_id === 'string') ids.set(`request:${recorded.request_id}`, answer.request_id as string);
      if (n === 9) {
        // the added request: SkyRL's initial adapter onto the model
        const model = ids.get('model_0cd152a9') as string;
        const load = await send('POST', '/api/v1/load_weights', { model_id: model, path: 'tinker://fixture/weights/skyrl-init', optimizer: false, seq_id: 1 });
        expect(load.status).toBe(200);
        const loaded = await send('POST', '/api/v1/retrieve_future', { request_id: (load.body as { request_id: string }).request_id });
        expect(loaded.body).toEqual({ path: 'tinker://fixture/weights/skyrl-init', model_id: model, type: 'load_weights' });
      }
      if (n in DIVERGES) {
        if (n === 56) expect(got.status).toBe(404);
        if (n === 68) expect(answer.detail).toMatch(/forward_backward_input\.data\[0\]\.loss_fn_inputs\.target_tokens.*23 values.*24 tokens/);
        if (n === 70) expect(answer.detail).toMatch(/target_tokens.*25 values.*24 tokens/);
        continue;
      }
      expect(got.status, `line ${n} ${e.method} ${e.path}: ${JSON.stringify(got.body).slice(0, 300)}`).toBe(e.status);
      if (recorded !== null && typeof recorded === 'object') expectShapeCovers(got.body, recorded, `line ${n}`);
      checked++;
    }
    expect(checked).toBe(80); // 86 lines, less line 77 and the five of DIVERGES

    const rec = (n: number) => transcript[n - 1]?.response_body as never;
    // base logprobs (fresh B = 0) and the retry of line 58 that returns line 14's stored result
    for (const n of [14, 15, 59]) {
      const ours = results[n] as Out;
      (rec(n) as Out).loss_fn_outputs.forEach((r, i) => {
      expect(maxDiff(ours.loss_fn_outputs[i]!.logprobs.data, r.logprobs.data)).toBeLessThan(1e-4);
    });
    }
    // the two training steps from SkyRL's initial adapter: losses, grad norms, logprobs after each step
    for (const n of [17, 21, 23, 25, 29, 53]) {
      const ours = results[n] as Out;
      (rec(n) as Out).loss_fn_outputs.forEach((r, i) => {
        expect(maxDiff(ours.loss_fn_outputs[i]!.logprobs.data, r.logprobs.data), `line ${n} logprobs`).toBeLessThan(1e-5);
        expect(maxDiff(ours.loss_fn_outputs[i]!.elementwise_loss.data, r.elementwise_loss.data), `line ${n} losses`).toBeLessThan(1e-5);
      });
    }
    expect((results[19] as { metrics: Record<string, number> }).metrics['turnwise/grad_norm']).toBeCloseTo(5.440444469, 4);
    expect((results[27] as { metrics: Record<string, number> }).metrics['turnwise/grad_norm']).toBeCloseTo(4.657454013, 4);
    // the archives: SkyRL's initial adapter as saved, and the trained one within 1e-5 of SkyRL's
    for (const [n, folder, tolerance] of [
      [12, 'sampler-adapter-init', 0],
      [33, 'sampler-adapter', 1e-5],
    ] as const) {
      const files = untar(gunzipSync(results[n] as Uint8Array));
      expect(JSON.parse(new TextDecoder().decode(files.get('adapter_config.json'))).target_modules).toEqual([...LORA_TARGETS]);
      const ours = decodeSafetensors(files.get('adapter_model.safetensors') as Uint8Array).tensors;
      const theirs = (await readPeftAdapter(fixture(folder))).weights;
      expect(Object.keys(ours).sort()).toEqual([...theirs.keys()].sort());
      for (const [name, w] of theirs) expect(maxDiff(Array.from(ours[name]!.data), Array.from(w.data)), name).toBeLessThanOrEqual(tolerance);
    }
    // greedy sampling: the same tokens, logprobs and prompt logprobs (SkyRL's layout: no leading entry)
    for (const n of [36, 44, 46, 50, 82]) {
      const ours = results[n] as Sampled;
      const theirs = rec(n) as Sampled;
      theirs.sequences.forEach((s, i) => {
        expect(ours.sequences[i]!.tokens, `line ${n}`).toEqual(s.tokens);
        expect(ours.sequences[i]!.stop_reason).toBe(s.stop_reason);
        expect(maxDiff(ours.sequences[i]!.logprobs, s.logprobs)).toBeLessThan(1e-4);
      });
      if (theirs.prompt_logprobs === null) expect(ours.prompt_logprobs).toBeNull();
      else expect(maxDiff(ours.prompt_logprobs as number[], theirs.prompt_logprobs)).toBeLessThan(1e-4);
    }
    // seeded sampling at temperature 1: reproducible, and sample i uses seed + i
    const twice = [results[38], results[40]] as Sampled[];
    expect(twice[0]!.sequences.map((s) => s.tokens)).toEqual(twice[1]!.sequences.map((s) => s.tokens));
    expect((results[42] as Sampled).sequences[0]!.tokens).toEqual(twice[0]!.sequences[1]!.tokens);
    // the failures name what failed
    expect((results[61] as { detail: string }).detail).toMatch(/LoRA rank 16 must be between 1 and 8/);
    expect((results[66] as { detail: string }).detail).toMatch(/'dppo' is not supported/);
    expect((results[80] as { detail: string }).detail).toMatch(/not loaded/);
    expect((results[86] as { detail: string }).detail).toMatch(/Engine is configured for 'BASE_MODEL_DIR' but request specified 'some\/other-model'/);
    expect(JSON.stringify(results[63])).toMatch(/loss_fn/);
    expect((results[75] as { detail: Array<{ loc: unknown[] }> }).detail[0]!.loc).toEqual(['body', 'adam_params', 'beta1']);
  }, 300_000);

  it('stops on SIGTERM with exit code 143 (after the replay, which ran first)', async () => {
    child.kill('SIGTERM');
    expect(await exited).toBe(143);
  });
});

/** The regular files of an (uncompressed) tar archive by name. */
function untar(bytes: Uint8Array): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  let pax: string | null = null;
  for (let at = 0; at + 512 <= bytes.length; ) {
    const header = bytes.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const text = (from: number, len: number) => new TextDecoder().decode(header.subarray(from, from + len)).replace(/\0.*$/s, '');
    const size = Number.parseInt(text(124, 12).trim() || '0', 8);
    const type = String.fromCharCode(header[156] as number);
    const body = bytes.subarray(at + 512, at + 512 + size);
    if (type === 'x') pax = /path=([^\n]+)\n/.exec(new TextDecoder().decode(body))?.[1] ?? null;
    else if (type === '0' || type === '\0') {
      files.set((pax ?? text(0, 100)).replace(/^\.\//, ''), body.slice());
      pax = null;
    }
    at += 512 + Math.ceil(size / 512) * 512;
  }
  return files;
}
