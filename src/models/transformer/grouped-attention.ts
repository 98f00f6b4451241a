/**
 * Attention for the packed inference path, run per *group* of rows with similar spans.
 *
 * Why groups: everything but attention runs packed (one `[sumNew, d]` matrix, no padding, see
 * transformer/inference.ts); attention needs each row's own keys. Plain JS attention costs ~100 ns
 * per (query, key, head) on this machine, ~8x XNNPACK's rate, so large chunks (observation
 * prefills) attend through tfjs on a right-padded `[rows, heads, width, span]` block: each row's
 * cached + new keys are one contiguous copy per head from its cache (the new ones are written
 * there first), query i of a row sits in column i. Padding is pure loss, and a group costs only
 * its ~5 attention kernels and 4 uploads, so groups are tight (rows sorted by span; a new group
 * starts when a row's span or new-token count falls below `ratio` of the group's). Narrow groups
 * (decode steps, at most `cpuAttentionMaxQueries()` new tokens per row) attend in JS
 * (transformer/packed-attention.ts), reading the caches in place: no copies, no uploads.
 */
import { tf } from '../../backend/tf.js';
import type { KvCache } from '../kv-cache.js';
import { cpuAttentionMaxQueries } from './cpu-attention.js';
import { attend, MASK_VALUE } from './layers.js';
import { type PackedShape, packedAttention } from './packed-attention.js';
import { readFloatsInto } from '../../backend/read-into.js';
import { ScratchPool } from './scratch.js';
import { stridedCopy } from '../../backend/strided-copy.js';

/** Rows that attend together, padded to the group's widest new chunk and longest cache. */
export interface AttentionGroup {
  /** Row indices (into the caches of the call). */
  readonly rows: number[];
  /** Most new tokens of a row in the group (query columns, left-padded). */
  width: number;
  /** Longest cached length in the group (cached key slots). */
  past: number;
}

// Hot loops here are plain loops and module-level functions, not closures made per call: V8
// recompiled such a closure (and its loop, on the stack) on nearly every call, ~0.3 s of CPU per
// quickstart step across the worker threads.

/** New tokens of row `r` in this call. */
function addedTokens(offsets: Int32Array, r: number): number {
  return offsets[r + 1] - offsets[r];
}

interface RowSpan {
  readonly row: number;
  readonly span: number;
  readonly added: number;
}

/** Longest span first, then most new tokens, then row order. */
function bySpanDescending(a: RowSpan, b: RowSpan): number {
  return b.span - a.span || b.added - a.added || a.row - b.row;
}

/** Row indices by attention span (cached + new) longest first, then new tokens, then index. */
function longestSpanFirst(pastLength: Int32Array, offsets: Int32Array): number[] {
  const spans: RowSpan[] = [];
  for (let row = 0; row < pastLength.length; row++) {
    const added = addedTokens(offsets, row);
    spans.push({ row, span: pastLength[row] + added, added });
  }
  return spans.sort(bySpanDescending).map(rowOf);
}

function rowOf(s: RowSpan): number {
  return s.row;
}

/**
 * Tight groups of rows by attention span (cached + new): sorted longest first, a row opens a new
 * group when its span or new-token count is below `ratio` of the group's, or when the group's
 * padded scores (`rows * heads * width * (past + width)` floats) would pass `maxScores` (so that
 * 64 long prompts cannot exhaust the wasm heap).
 * @example attentionGroups(new Int32Array([150, 10]), new Int32Array([0, 90, 95]), 0.9, 4, 2 ** 24) // two groups
 */
export function attentionGroups(pastLength: Int32Array, offsets: Int32Array, ratio: number, heads: number, maxScores: number): AttentionGroup[] {
  const sorted = longestSpanFirst(pastLength, offsets);
  const groups: AttentionGroup[] = [];
  let open: AttentionGroup | null = null;
  let openSpan = 0;
  for (const r of sorted) {
    const n = addedTokens(offsets, r);
    const rowSpan = pastLength[r] + n;
    const width = Math.max(open?.width ?? 0, n);
    const full = open !== null && (open.rows.length + 1) * heads * width * (Math.max(open.past, pastLength[r]) + width) > maxScores;
    if (open === null || full || rowSpan < ratio * openSpan || n < ratio * open.width || open.width < ratio * n) {
      open = { rows: [r], width: n, past: pastLength[r] };
      openSpan = rowSpan;
      groups.push(open);
    } else {
      open.rows.push(r);
      open.width = Math.max(open.width, n);
      open.past = Math.max(open.past, pastLength[r]);
    }
  }
  return groups;
}

/**
 * Attention of every group, written into the packed context `out` `[sumNew, d]`. `qkv` is the
 * roped fused projection `[sumNew, 3d]`; each row's cache already holds this layer's new keys and
 * values at slots `[pastLength[r], pastLength[r] + new)` (written, not yet advanced). `masks`
 * keeps each group's additive mask across the layers of one call (pass the same array); `scratch`
 * holds the staging buffers of the groups attended through tfjs.
 * @example attendGroups(qkv, caches, pastLength, layer, shape, groups, masks, ctx);
 */
export function attendGroups(
  qkv: Float32Array,
  caches: readonly KvCache[],
  pastLength: Int32Array,
  layer: number,
  shape: PackedShape,
  groups: readonly AttentionGroup[],
  masks: Array<Float32Array | undefined>,
  out: Float32Array,
  scratch: ScratchPool = new ScratchPool(),
): void {
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i];
    if (group.width <= cpuAttentionMaxQueries()) {
      packedAttention(qkv, caches, pastLength, layer, shape, group.rows, out);
      continue;
    }
    const mask = masks[i] ?? groupMask(caches, pastLength, shape.offsets, group);
    masks[i] = mask;
    tfjsGroup(qkv, caches, pastLength, layer, shape, group, mask, out, scratch);
  }
}

/** Key slots of a group: each row's cached + new keys sit at slots [0, span) (right-padded). */
function groupSlots(pastLength: Int32Array, offsets: Int32Array, group: AttentionGroup): number {
  let slots = 1;
  for (const r of group.rows) slots = Math.max(slots, pastLength[r] + offsets[r + 1] - offsets[r]);
  return slots;
}

/**
 * `[b, 1, width, slots]` additive mask: new query i of a row (column i) sees the row's real
 * cached slots and its new keys up to itself, slots `[past, past + i]`; padding queries (columns
 * past the row's new tokens) see slot 0 only, so that their softmax stays finite (never read).
 */
function groupMask(caches: readonly KvCache[], pastLength: Int32Array, offsets: Int32Array, group: AttentionGroup): Float32Array {
  const { rows, width: t } = group;
  const slots = groupSlots(pastLength, offsets, group);
  const mask = new Float32Array(rows.length * t * slots).fill(MASK_VALUE);
  for (let g = 0; g < rows.length; g++) {
    const r = rows[g];
    const past = pastLength[r];
    const n = offsets[r + 1] - offsets[r];
    const keyMask = caches[r].keyMask; // only the cached slots' entries are set before advance()
    let compact = true;
    for (let j = 0; j < past && compact; j++) compact = keyMask[j] === 1;
    for (let i = 0; i < t; i++) {
      const row = (g * t + i) * slots;
      if (i >= n) {
        mask[row] = 0;
        continue;
      }
      if (compact) mask.fill(0, row, row + past + i + 1);
      else {
        for (let j = 0; j < past; j++) if (keyMask[j] === 1) mask[row + j] = 0;
        mask.fill(0, row + past, row + past + i + 1);
      }
    }
  }
  return mask;
}

/** One group through tfjs: right-padded queries over each row's keys copied from its cache in one block per head. */
function tfjsGroup(
  qkv: Float32Array,
  caches: readonly KvCache[],
  pastLength: Int32Array,
  layer: number,
  shape: PackedShape,
  group: AttentionGroup,
  mask: Float32Array,
  out: Float32Array,
  scratch: ScratchPool,
): void {
  const { heads: h, kvHeads: hkv, headDim: hd, offsets } = shape;
  const d = h * hd; // context width
  const stride = (h + 2 * hkv) * hd;
  const { rows, width: t } = group;
  const b = rows.length;
  const slots = groupSlots(pastLength, offsets, group);
  // Pooled, so stale: the padding (keys past a row's span, queries past its new tokens) is zeroed
  // below, as fresh arrays had it, so that the products see the same values.
  const q = scratch.take('groupQ', b * h * t * hd); // [b, h, t, hd]
  const k = scratch.take('groupK', b * hkv * slots * hd); // [b, hkv, slots, hd]
  const v = scratch.take('groupV', b * hkv * slots * hd);
  for (let g = 0; g < rows.length; g++) {
    const r = rows[g];
    const cache = caches[r];
    const span = pastLength[r] + offsets[r + 1] - offsets[r];
    const cap = cache.capacity;
    const { key: kc, value: vc } = cache.layerBuffers(layer);
    for (let head = 0; head < hkv; head++) {
      const block = (g * hkv + head) * slots * hd;
      k.set(kc.subarray(head * cap * hd, (head * cap + span) * hd), block);
      v.set(vc.subarray(head * cap * hd, (head * cap + span) * hd), block);
      k.fill(0, block + span * hd, block + slots * hd);
      v.fill(0, block + span * hd, block + slots * hd);
    }
    const added = offsets[r + 1] - offsets[r];
    for (let head = 0; head < h; head++) {
      stridedCopy(qkv, offsets[r] * stride + head * hd, stride, q, (g * h + head) * t * hd, hd, added, hd);
      q.fill(0, ((g * h + head) * t + added) * hd, ((g * h + head) * t + t) * hd);
    }
  }
  let context: Float32Array = new Float32Array(0);
  tf.tidy(() => {
    const result = attend(
      tf.tensor4d(q, [b, h, t, hd]),
      tf.tensor4d(k, [b, hkv, slots, hd]),
      tf.tensor4d(v, [b, hkv, slots, hd]),
      tf.tensor4d(mask, [b, 1, t, slots]),
      'infer',
    );
    context = readFloatsInto(result, scratch.take('groupContext', b * h * t * hd)); // [b, h, t, hd]
  });
  for (let g = 0; g < rows.length; g++) {
    const r = rows[g];
    for (let head = 0; head < h; head++) stridedCopy(context, (g * h + head) * t * hd, hd, out, offsets[r] * d + head * hd, d, offsets[r + 1] - offsets[r], hd);
  }
}
