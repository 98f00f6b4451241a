/*
 * Greedy decoding's per-row pick over [n, v] logits (issue #20): the argmax of the first `count`
 * columns (ties: the lower id), its log-prob and the entropy of softmax over those columns. In JS
 * this was two exp passes per logit in float64 (maskedLogProbs + entropyOf): ~110 ms per step at
 * 64 rows x 49152 ids, a quarter of a B = 64 decode step. Here one max pass and one exp pass,
 * vectorised (-ffast-math, expf through libmvec, as log_softmax.c), with
 *   S = sum e, T = sum e * (z - m), e = exp(z - m):  logp[best] = -log S,  H = log S - T / S.
 * Float sums, as the training loss head (log_softmax.c) scores the same distribution.
 */
#include <math.h>
#include <node_api.h>
#include <stdint.h>

#include "napi_arrays.h"

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

CLONES static float row_max(const float *row, int64_t count) {
  float m = row[0];
  for (int64_t j = 1; j < count; j++) m = row[j] > m ? row[j] : m;
  return m;
}

CLONES static void exp_sums(const float *row, float m, int64_t count, float *total, float *weighted) {
  float s = 0, t = 0;
  for (int64_t j = 0; j < count; j++) {
    float d = row[j] - m;
    /* Clamped as in log_softmax.c: lanes far below keep glibc's vector expf on its fast path. */
    float e = expf(d < -87.0f ? -87.0f : d);
    e = d < -87.0f ? 0.0f : e;
    s += e;
    t += e * d;
  }
  *total = s;
  *weighted = t;
}

/* greedyRows(z [n*v], n, v, count, ids [n] out, stats [2n] out: log-probs then entropies) */
napi_value greedy_rows_js(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value a[6];
  float *z, *stats;
  int32_t *ids;
  size_t lz, li, ls;
  int64_t n, v, count;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 6 || !f32(env, a[0], &z, &lz) || napi_get_value_int64(env, a[1], &n) != napi_ok ||
      napi_get_value_int64(env, a[2], &v) != napi_ok || napi_get_value_int64(env, a[3], &count) != napi_ok || !i32(env, a[4], &ids, &li) || !f32(env, a[5], &stats, &ls)) {
    return throw_type(env, "greedyRows: expected (z: Float32Array, n, v, count: integers, ids: Int32Array, stats: Float32Array)");
  }
  if (n < 1 || v < 1 || count < 1 || count > v) return throw_type(env, "greedyRows: expected n, v >= 1 and count in [1, v]");
  if (lz < (size_t)(n * v) || li < (size_t)n || ls < (size_t)(2 * n)) return throw_type(env, "greedyRows: an array is shorter than n and v say");
  for (int64_t i = 0; i < n; i++) {
    const float *row = z + i * v;
    float m = row_max(row, count);
    int64_t best = 0;
    while (best < count - 1 && row[best] != m) best++; /* the first maximum: ties go to the lower id */
    float total = 0, weighted = 0;
    exp_sums(row, m, count, &total, &weighted);
    double logTotal = log((double)total);
    ids[i] = (int32_t)best;
    stats[i] = (float)-logTotal;
    stats[n + i] = (float)(logTotal - (double)weighted / total);
  }
  return NULL;
}
