import { afterAll, describe, expect, it, vi } from 'vitest';
import { InvalidConfigError } from '../../src/core/errors.js';
import { type BackendLoader, describeBackend, selectBackend } from '../../src/backend/select.js';
import { nativeUse } from '../../src/backend/native.js';
import { tf } from '../../src/backend/tf.js';

const notInstalled: BackendLoader = { resolve: () => null, load: () => Promise.reject(new Error('unreachable')) };

afterAll(async () => {
  if (tf.findBackendFactory('tensorflow') != null) tf.removeBackend('tensorflow');
  await tf.setBackend('cpu');
});

describe('selectBackend', () => {
  it('prints no "running TensorFlow.js in Node.js" banner on cpu', async () => {
    const warn = vi.spyOn(console, 'warn');
    try {
      const info = await selectBackend('cpu');
      tf.tidy(() => tf.tensor([1, 2, 3]).add(1).dataSync());
      expect(info).toEqual({ name: 'cpu', simd: false, threads: 1, note: 'requested' });
      expect(warn.mock.calls.flat().join(' ')).not.toMatch(/looks like you are running/);
    } finally {
      warn.mockRestore();
    }
  });

  it('auto falls back to wasm with SIMD and one thread when tfjs-node is not installed', async () => {
    const info = await selectBackend('auto', { loader: notInstalled });
    expect(info).toEqual({ name: 'wasm', simd: true, threads: 1, note: 'tfjs-node not installed', matmul: expect.stringMatching(/^(native BLAS |wasm \(native BLAS: )/) });
    expect(tf.getBackend()).toBe('wasm');
    expect(describeBackend(info)).toBe(`backend: wasm (SIMD, 1 thread; tfjs-node not installed), matmul: ${info.matmul}`);
    // wasm really works from Node ESM, with the shim kernels present.
    expect(tf.tidy(() => Array.from(tf.matMul(tf.ones([2, 3]), tf.ones([3, 2])).dataSync()))).toEqual([3, 3, 3, 3]);
    // The shim kernel is registered and computes (stock wasm throws "kernel not registered" here).
    expect(tf.getKernel('UnsortedSegmentSum', 'wasm')?.backendName).toBe('wasm');
    const sums = tf.tidy(() => Array.from(tf.unsortedSegmentSum(tf.tensor1d([1, 2, 3]), tf.tensor1d([0, 1, 0], 'int32'), 2).dataSync()));
    expect(sums).toEqual([4, 2]);
  });

  it('switches only the matmul path when the same backend is asked for with another model.matmul', async () => {
    const first = await selectBackend('wasm');
    const backend = tf.backend();
    const wasmOnly = await selectBackend('wasm', { matmul: 'wasm' });
    expect(wasmOnly.matmul).toBe('wasm (requested)');
    expect(nativeUse()).toBe('off');
    expect(tf.backend()).toBe(backend);
    const again = await selectBackend('wasm');
    expect(again.matmul).toBe(first.matmul);
    expect(nativeUse()).toBe(first.matmul?.startsWith('native') === true ? 'all' : 'off');
    await expect(selectBackend('wasm', { matmul: 'fast' as never })).rejects.toThrow(/model\.matmul/);
  });

  it('is idempotent: a second call returns the same info without re-initialising', async () => {
    const first = await selectBackend('wasm');
    const [second, third] = await Promise.all([selectBackend('wasm'), selectBackend('wasm')]);
    expect(second).toBe(first);
    expect(third).toBe(first);
  });

  it('switches back and forth between explicit backends', async () => {
    expect((await selectBackend('cpu')).name).toBe('cpu');
    expect(tf.getBackend()).toBe('cpu');
    expect((await selectBackend('wasm')).name).toBe('wasm');
    expect(tf.getBackend()).toBe('wasm');
  });

  it("rejects an explicit 'tensorflow' that is not installed, naming the option", async () => {
    const err = await selectBackend('tensorflow', { loader: notInstalled }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidConfigError);
    expect((err as InvalidConfigError).path).toBe('runtime.backend');
    expect((err as Error).message).toMatch(/'tensorflow' is not available \(tfjs-node not installed\)/);
  });

  it('reports a tfjs-node that is installed but fails to load, and falls back', async () => {
    const broken: BackendLoader = {
      resolve: (s) => (s === '@tensorflow/tfjs-node-gpu' ? '/fake/index.js' : null),
      load: () => Promise.reject(new Error('The Node.js native addon module (tfjs_binding.node) can not be found\nmore')),
    };
    const info = await selectBackend('auto', { loader: broken });
    expect(info.name).toBe('wasm');
    expect(info.note).toBe('tfjs-node-gpu failed to load: The Node.js native addon module (tfjs_binding.node) can not be found');
  });

  it("uses the 'tensorflow' backend once a native package has registered it", async () => {
    const loaded: string[] = [];
    const fake: BackendLoader = {
      resolve: (s) => (s === '@tensorflow/tfjs-node' ? '/fake/tfjs-node.js' : null),
      load: async (s) => {
        loaded.push(s);
        // Stand-in for tfjs-node's side effect: register a backend under the name 'tensorflow'.
        const cpuFactory = tf.findBackendFactory('cpu');
        if (tf.findBackendFactory('tensorflow') == null) tf.registerBackend('tensorflow', cpuFactory);
      },
    };
    const info = await selectBackend('tensorflow', { loader: fake });
    expect(loaded).toEqual(['@tensorflow/tfjs-node']);
    expect(info.name).toBe('tensorflow');
    expect(info.note).toBe('via tfjs-node');
    expect(tf.getBackend()).toBe('tensorflow');
    tf.removeBackend('tensorflow');
    await selectBackend('wasm');
  });

  it('rejects an unknown preference with the valid ones', async () => {
    await expect(selectBackend('gpu' as never, { configPath: 'model.backend' })).rejects.toThrow(
      /invalid config at 'model.backend': expected one of auto, tensorflow, wasm, cpu, got "gpu"/,
    );
  });
});
