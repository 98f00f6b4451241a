/*
 * Attention of a few new queries per row over the CPU-held KV cache (issue #20), the native form
 * of transformer/cpu-attention.ts with the same arguments and semantics. Why: a B = 64 decode step
 * through tfjs uploaded every layer's whole key and value cache into the wasm heap (two ~4 MB
 * copies per layer at 64 rows x 80 slots) and ran a [192]-batch of tiny sgemms plus softmax and
 * scaling kernels, ~80 ms of a ~450 ms step; the cache buffers are plain memory N-API reads in place.
 *
 * Query i of row b sees cached slot j < past when pastMask[b, j] = 1 and new slot past + j when
 * j <= i and newMask[b, j] = 1; query head h reads kv head h / (heads / kvHeads). A query that sees
 * no key gets zeros. Float32 with -ffast-math (dot products and exp vectorise); masked slots are
 * skipped, not scored.
 */
#include <float.h>
#include <math.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "napi_arrays.h"

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
/* Into L2 (prefetcht2-class hint): the next block arrives while this one is computed. */
#define PREFETCH(p) __builtin_prefetch((p), 0, 1)

typedef struct {
  int64_t rows, heads, kv_heads, queries, head_dim, past, capacity;
} Shape;

/*
 * The g query heads of one kv head, one query (q rows `q_stride` apart, out rows `out_stride`):
 * scores [g, n] over the `n` visible slots, softmax, then out = probs . values. The heads of a
 * group share each key and value row while it is in registers (2.3x faster than head by head).
 */
static inline __attribute__((always_inline)) void group_body(const float *restrict q, int64_t q_stride, const float *restrict keys, const float *restrict values, const int32_t *restrict visible,
                                                             int64_t n, const int64_t hd, int64_t g, float scale, float *restrict scores, float *restrict out, int64_t out_stride,
                                                             const float *next_keys, const float *next_values, int64_t next_floats) {
  for (int64_t k = 0; k < n; k++) {
    const float *key = keys + (int64_t)visible[k] * hd;
    for (int64_t off = k * hd; off < (k + 1) * hd && off < next_floats; off += 16) PREFETCH(next_keys + off);
    for (int64_t h = 0; h < g; h++) {
      const float *qh = q + h * q_stride;
      float dot = 0;
      for (int64_t d = 0; d < hd; d++) dot += qh[d] * key[d];
      scores[h * n + k] = dot * scale;
    }
  }
  for (int64_t h = 0; h < g; h++) {
    float *sh = scores + h * n;
    float max = -FLT_MAX; /* not -INFINITY: -ffast-math assumes finite values */
    for (int64_t k = 0; k < n; k++) max = sh[k] > max ? sh[k] : max;
    float sum = 0;
    for (int64_t k = 0; k < n; k++) {
      float d = sh[k] - max;
      float e = expf(d < -87.0f ? -87.0f : d); /* clamped as in layers.c: vector expf stays on its fast path */
      e = d < -87.0f ? 0.0f : e;
      sh[k] = e;
      sum += e;
    }
    float inv = 1.0f / sum;
    for (int64_t k = 0; k < n; k++) sh[k] *= inv;
    float *o = out + h * out_stride;
    for (int64_t d = 0; d < hd; d++) o[d] = 0;
  }
  for (int64_t k = 0; k < n; k++) {
    const float *value = values + (int64_t)visible[k] * hd;
    for (int64_t off = k * hd; off < (k + 1) * hd && off < next_floats; off += 16) PREFETCH(next_values + off);
    for (int64_t h = 0; h < g; h++) {
      float w = scores[h * n + k];
      float *o = out + h * out_stride;
      for (int64_t d = 0; d < hd; d++) o[d] += w * value[d];
    }
  }
  for (int64_t off = n * hd; off < next_floats; off += 16) {
    PREFETCH(next_keys + off);
    PREFETCH(next_values + off);
  }
}

/* Any head size, and head size 64 (SmolLM2, Llama 3.2, Qwen) with its loops fully unrolled. */
CLONES static void group_any(const float *q, int64_t qs, const float *keys, const float *values, const int32_t *visible, int64_t n, int64_t hd, int64_t g, float scale, float *scores, float *out, int64_t os, const float *pk, const float *pv, int64_t pn) {
  group_body(q, qs, keys, values, visible, n, hd, g, scale, scores, out, os, pk, pv, pn);
}
CLONES static void group_64(const float *q, int64_t qs, const float *keys, const float *values, const int32_t *visible, int64_t n, int64_t g, float scale, float *scores, float *out, int64_t os, const float *pk, const float *pv, int64_t pn) {
  group_body(q, qs, keys, values, visible, n, 64, g, scale, scores, out, os, pk, pv, pn);
}

static void attend_all(const float *q, const float *keys, const float *values, const uint8_t *past_mask, const uint8_t *new_mask, float *out, const Shape *s, int32_t *visible, float *scores) {
  const int64_t t = s->queries, hd = s->head_dim, cap = s->capacity, group = s->heads / s->kv_heads;
  const float scale = 1.0f / sqrtf((float)hd);
  for (int64_t b = 0; b < s->rows; b++) {
    for (int64_t i = 0; i < t; i++) {
      int64_t n = 0;
      for (int64_t j = 0; j < s->past; j++) if (past_mask[b * cap + j] == 1) visible[n++] = (int32_t)j;
      for (int64_t j = 0; j <= i; j++) if (new_mask[b * t + j] == 1) visible[n++] = (int32_t)(s->past + j);
      for (int64_t kh = 0; kh < s->kv_heads; kh++) {
        const int64_t q_off = ((b * s->heads + kh * group) * t + i) * hd; /* query i of the group's first head; heads are t * hd apart */
        if (n == 0) {
          for (int64_t h = 0; h < group; h++) memset(out + q_off + h * t * hd, 0, (size_t)hd * sizeof(float));
          continue;
        }
        const int64_t block = (b * s->kv_heads + kh) * cap * hd;
        /* The next block's used slots (`ahead` floats of keys and of values), prefetched a key row
           at a time as this block's rows are read: at 64 rows the caches (~7 MB a layer) come from
           DRAM. One burst of prefetches per block (likely more than the miss queue holds) left 24.5 ms of attention
           per 30-layer step at B = 64, cold caches); spread this way it is 16.5 ms (bench/RESULTS.md, "decode-speed"). */
        const int64_t next = block + cap * hd, used = (s->past + t) * hd;
        const int64_t ahead = next + used <= s->rows * s->kv_heads * cap * hd ? used : 0;
        if (hd == 64) group_64(q + q_off, t * hd, keys + block, values + block, visible, n, group, scale, scores, out + q_off, t * hd, keys + next, values + next, ahead);
        else group_any(q + q_off, t * hd, keys + block, values + block, visible, n, hd, group, scale, scores, out + q_off, t * hd, keys + next, values + next, ahead);
      }
    }
  }
}

int tw_decode_attention(const float *q, const float *keys, const float *values, const uint8_t *past_mask, const uint8_t *new_mask, float *out, int64_t rows, int64_t heads, int64_t kv_heads,
                        int64_t queries, int64_t head_dim, int64_t past, int64_t capacity) {
  Shape s = {rows, heads, kv_heads, queries, head_dim, past, capacity};
  int32_t *visible = malloc((size_t)(past + queries) * sizeof(int32_t));
  float *scores = malloc((size_t)((past + queries) * (heads / kv_heads)) * sizeof(float));
  if (visible == NULL || scores == NULL) {
    free(visible);
    free(scores);
    return 0;
  }
  attend_all(q, keys, values, past_mask, new_mask, out, &s, visible, scores);
  free(visible);
  free(scores);
  return 1;
}

/* decodeAttention(q, keys, values, pastMask, newMask, out, rows, heads, kvHeads, queries, headDim, past, capacity) */
napi_value decode_attention_js(napi_env env, napi_callback_info info) {
  size_t argc = 13;
  napi_value a[13];
  float *q, *keys, *values, *out;
  uint8_t *past_mask, *new_mask;
  size_t lq, lk, lv, lp, ln, lo;
  int64_t n[7];
  int ok = napi_get_cb_info(env, info, &argc, a, NULL, NULL) == napi_ok && argc >= 13 && f32(env, a[0], &q, &lq) && f32(env, a[1], &keys, &lk) && f32(env, a[2], &values, &lv) &&
           u8(env, a[3], &past_mask, &lp) && u8(env, a[4], &new_mask, &ln) && f32(env, a[5], &out, &lo);
  for (int i = 0; ok && i < 7; i++) ok = napi_get_value_int64(env, a[6 + i], &n[i]) == napi_ok && n[i] >= (i == 5 ? 0 : 1);
  if (!ok) return throw_type(env, "decodeAttention: expected (q, keys, values: Float32Array, pastMask, newMask: Uint8Array, out: Float32Array, rows, heads, kvHeads, queries, headDim, past, capacity: integers)");
  Shape s = {n[0], n[1], n[2], n[3], n[4], n[5], n[6]};
  if (s.heads % s.kv_heads != 0 || s.past + s.queries > s.capacity) return throw_type(env, "decodeAttention: heads must be a multiple of kvHeads and past + queries fit the capacity");
  const size_t qn = (size_t)(s.rows * s.heads * s.queries * s.head_dim), kn = (size_t)(s.rows * s.kv_heads * s.capacity * s.head_dim);
  if (lq < qn || lo < qn || lk < kn || lv < kn || lp < (size_t)(s.rows * s.capacity) || ln < (size_t)(s.rows * s.queries)) return throw_type(env, "decodeAttention: an array is shorter than the shape says");
  int32_t *visible = malloc((size_t)(s.past + s.queries) * sizeof(int32_t));
  float *scores = malloc((size_t)((s.past + s.queries) * (s.heads / s.kv_heads)) * sizeof(float));
  if (visible == NULL || scores == NULL) {
    free(visible);
    free(scores);
    return throw_type(env, "decodeAttention: out of memory");
  }
  attend_all(q, keys, values, past_mask, new_mask, out, &s, visible, scores);
  free(visible);
  free(scores);
  return NULL;
}
