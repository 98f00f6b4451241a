/**
 * Rotary position embeddings: the inverse frequencies of a config (plain, linear or Llama 3
 * scaling) and a cos/sin table that grows with the positions asked for.
 *
 * The arithmetic follows transformers' float32 computation step by step (`Math.fround` after
 * every operation): `inv_freq = 1 / θ^(2i/hd)`, the angle `pos * inv_freq` rounded to float32,
 * then cos/sin. Why: at position p the float32 angle carries an error of about p * 2^-24 rad
 * that transformers' model has too; computing in float64 instead would differ from it by ~1e-4
 * at a few thousand tokens.
 */
import type { RopeScaling, TransformerConfig } from './config.js';
import { headDim } from './config.js';

const f = Math.fround;

/**
 * `[headDim / 2]` inverse frequencies, scaled as `config.ropeScaling` says.
 * @example ropeInverseFrequencies({ ...cfg, headDim: 4, ropeTheta: 10000 }) // [1, 0.01]
 */
export function ropeInverseFrequencies(config: TransformerConfig): Float32Array {
  const hd = headDim(config);
  const half = hd / 2;
  const out = new Float32Array(half);
  const base = f(config.ropeTheta);
  for (let i = 0; i < half; i++) out[i] = f(1 / f(base ** f(f(2 * i) / hd)));
  const scaling = config.ropeScaling ?? null;
  if (scaling !== null) applyScaling(out, scaling);
  return out;
}

function applyScaling(inv: Float32Array, scaling: RopeScaling): void {
  if (scaling.type === 'linear') {
    for (let i = 0; i < inv.length; i++) inv[i] = f(inv[i] / scaling.factor);
    return;
  }
  const { factor, lowFreqFactor, highFreqFactor, originalMaxPositions: old } = scaling;
  const lowWavelen = old / lowFreqFactor;
  const highWavelen = old / highFreqFactor;
  for (let i = 0; i < inv.length; i++) {
    const wavelen = f((2 * Math.PI) / inv[i]);
    const llama = wavelen > lowWavelen ? f(inv[i] / factor) : inv[i];
    const medium = !(wavelen < highWavelen) && !(wavelen > lowWavelen);
    if (!medium) {
      inv[i] = llama;
      continue;
    }
    const smooth = f(f(f(old / wavelen) - lowFreqFactor) / (highFreqFactor - lowFreqFactor));
    inv[i] = f(f(f(f(1 - smooth) * llama) / factor) + f(smooth * llama));
  }
}

/**
 * cos/sin of every position's angles, HF layout (`emb = cat(freqs, freqs)`): entry `[pos, j]`
 * uses `inv_freq[j mod hd/2]`. Rows are computed up to the highest position asked for (doubling),
 * so a model with a 128k-position config costs only what its contexts use.
 * @example
 * const table = new RopeTable(ropeInverseFrequencies(cfg), cfg.maxContext);
 * table.ensure(100); table.cos[99 * hd + 3] // cos(99 * inv_freq[3])
 */
export class RopeTable {
  private cosTable = new Float32Array(0);
  private sinTable = new Float32Array(0);
  private rows = 0;
  readonly headDim: number;

  constructor(
    private readonly inverseFrequencies: Float32Array,
    private readonly maxPositions: number,
  ) {
    this.headDim = inverseFrequencies.length * 2;
  }

  /** `[positions, headDim]` cosines (valid for positions below the last {@link ensure}). */
  get cos(): Float32Array {
    return this.cosTable;
  }

  /** `[positions, headDim]` sines. */
  get sin(): Float32Array {
    return this.sinTable;
  }

  /** Makes rows `[0, positions)` available (capped at the model's max positions). */
  ensure(positions: number): void {
    if (positions <= this.rows) return;
    const rows = Math.min(this.maxPositions, Math.max(positions, 2 * this.rows, 64));
    const hd = this.headDim;
    const half = hd / 2;
    const cos = new Float32Array(rows * hd);
    const sin = new Float32Array(rows * hd);
    cos.set(this.cosTable);
    sin.set(this.sinTable);
    for (let pos = this.rows; pos < rows; pos++) {
      for (let i = 0; i < half; i++) {
        const angle = f(pos * this.inverseFrequencies[i]);
        const c = Math.cos(angle);
        const s = Math.sin(angle);
        cos[pos * hd + i] = c;
        cos[pos * hd + i + half] = c;
        sin[pos * hd + i] = s;
        sin[pos * hd + i + half] = s;
      }
    }
    this.cosTable = cos;
    this.sinTable = sin;
    this.rows = rows;
  }
}
