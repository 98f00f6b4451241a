import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { InvalidArgumentError, InvalidConfigError } from '../../src/core/errors.js';
import { type NativeUse, nativeHostKernels, nativeKernels, nativeMatmul, nativeUse, setNativeUse } from '../../src/backend/native.js';
import { nativeBlas } from '../../src/backend/native-blas.js';
import { selectBackend } from '../../src/backend/select.js';
import { tf } from '../../src/backend/tf.js';

const { blas } = nativeBlas();

/** Which accessors hand out the addon now. */
function handedOut(): { matmul: boolean; kernels: boolean; host: boolean } {
  return { matmul: nativeMatmul() !== null, kernels: nativeKernels() !== null, host: nativeHostKernels() !== null };
}

afterEach(() => setNativeUse('all'));
afterAll(async () => {
  await tf.setBackend('cpu');
});

describe('the native switch', () => {
  it('starts at all', () => {
    expect(nativeUse()).toBe('all');
  });

  it('hands out nothing in state off, whatever the backend and the addon', async () => {
    await selectBackend('wasm');
    setNativeUse('off');
    expect(handedOut()).toEqual({ matmul: false, kernels: false, host: false });
  });

  it('refuses a bad state naming the field, and keeps the current one', () => {
    setNativeUse('matmul');
    const bad = () => setNativeUse('fast' as NativeUse, 'bench.native');
    expect(bad).toThrow(InvalidArgumentError);
    expect(bad).toThrow(/'bench\.native'.*all, matmul, off.*"fast"/);
    expect(nativeUse()).toBe('matmul');
  });

  it('refuses a bad model.matmul naming the field, leaving the switch as it was', async () => {
    await selectBackend('wasm', { matmul: 'wasm' });
    await expect(selectBackend('wasm', { matmul: 'fast' as never })).rejects.toThrow(InvalidConfigError);
    await expect(selectBackend('wasm', { matmul: 'fast' as never })).rejects.toThrow(/model\.matmul/);
    expect(nativeUse()).toBe('off');
  });

  it('model.matmul: wasm sets off', async () => {
    await selectBackend('wasm', { matmul: 'auto' }); // selectBackend answers a repeated request from its cache
    const info = await selectBackend('wasm', { matmul: 'wasm' });
    expect(info.matmul).toBe('wasm (requested)');
    expect(nativeUse()).toBe('off');
    expect(handedOut()).toEqual({ matmul: false, kernels: false, host: false });
  });

  it('model.matmul: auto sets all with the addon, off without it', async () => {
    await selectBackend('wasm', { matmul: 'wasm' });
    setNativeUse('matmul');
    await selectBackend('wasm', { matmul: 'auto' });
    expect(nativeUse()).toBe(blas !== null ? 'all' : 'off');
  });
});

describe.runIf(blas !== null)('the native switch with the addon loaded', () => {
  it.each([
    ['all', { matmul: true, kernels: true, host: true }],
    ['matmul', { matmul: true, kernels: false, host: false }],
    ['off', { matmul: false, kernels: false, host: false }],
  ] as const)('state %s on wasm hands out %o', async (state, expected) => {
    await selectBackend('wasm', { matmul: 'native' });
    setNativeUse(state);
    expect(nativeUse()).toBe(state);
    expect(handedOut()).toEqual(expected);
    if (expected.matmul) expect(nativeMatmul()).toBe(blas);
  });

  it('gives the tensor kernels only on wasm; products and host-array kernels on any backend', async () => {
    await selectBackend('cpu');
    setNativeUse('all');
    expect(handedOut()).toEqual({ matmul: true, kernels: false, host: true });
  });
});
