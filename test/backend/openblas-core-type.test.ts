import { describe, expect, it } from 'vitest';
import { openblasCoreType } from '../../src/backend/openblas-core-type.js';

/** A /proc/cpuinfo of two processors; the first block is what counts. */
function cpuinfo(vendor: string, family: number, flags: string): string {
  const block = (n: number) => `processor\t: ${n}\nvendor_id\t: ${vendor}\ncpu family\t: ${family}\nmodel\t\t: 17\nflags\t\t: fpu sse2 ${flags} avx2 fma\n`;
  return `${block(0)}\n${block(1)}`;
}

describe('openblasCoreType', () => {
  it('asks for the Zen (AVX2) kernels on AMD family 25 with AVX-512 (Zen 4)', () => {
    expect(openblasCoreType(cpuinfo('AuthenticAMD', 25, 'avx512f avx512bw'), {})).toBe('Zen');
  });

  it("leaves OpenBLAS's pick elsewhere: Zen 3 (no AVX-512), Zen 5 (family 26), Intel, no cpuinfo", () => {
    expect(openblasCoreType(cpuinfo('AuthenticAMD', 25, 'sse4_2'), {})).toBeNull();
    expect(openblasCoreType(cpuinfo('AuthenticAMD', 26, 'avx512f'), {})).toBeNull();
    expect(openblasCoreType(cpuinfo('GenuineIntel', 6, 'avx512f'), {})).toBeNull();
    expect(openblasCoreType('', {})).toBeNull();
  });

  it('never overrides an OPENBLAS_CORETYPE the user set', () => {
    const zen4 = cpuinfo('AuthenticAMD', 25, 'avx512f');
    expect(openblasCoreType(zen4, { OPENBLAS_CORETYPE: 'Cooperlake' })).toBeNull();
    expect(openblasCoreType(zen4, { OPENBLAS_CORETYPE: '' })).toBe('Zen');
  });

  it('reads only whole flags (avx512fp16 alone is not avx512f)', () => {
    expect(openblasCoreType(cpuinfo('AuthenticAMD', 25, 'avx512fp16'), {})).toBeNull();
  });
});
