/*
 * The training loss head's per-row statistics in one pass over [N, V] logits (issue #10): the
 * log-prob of each row's target and the entropy of softmax(z), and their gradient. On the tfjs
 * wasm backend the same math is about a dozen broadcast kernels over [N, V] (max, sub, exp, sum,
 * log, div, mul, ...), each a full pass over 4 bytes x N x V: a third of a training step.
 *
 * Forward, per row i: m = max z, lse = m + log sum exp(z - m), logp = z - lse,
 *   stats[0][i] = logp[target], stats[1][i] = H = -sum p * logp.
 * Backward, with p = exp(logp): dz = dLogp * (onehot(target) - p) - dH * p * (logp + H).
 * The forward also writes p (one exp per logit in all: the backward reads p instead of redoing
 * exp, which was half of this kernel's time). Masked logits (about -1e9) give p = 0 and a zero
 * gradient; logp = z - lse stays finite, so no 0 * inf.
 */
#include <math.h>
#include <node_api.h>
#include <stdint.h>

#include "napi_arrays.h"

static int dims(napi_env env, napi_value nv, napi_value vv, int64_t *n, int64_t *v) {
  return napi_get_value_int64(env, nv, n) == napi_ok && napi_get_value_int64(env, vv, v) == napi_ok && *n >= 1 && *v >= 1;
}

/*
 * p = exp(row - m) / S, with S and T = sum e * (row - m). Built for AVX2 and for the baseline,
 * chosen at load time (target_clones): with -ffast-math GCC vectorises expf through glibc's
 * libmvec there, 8 lanes at a time. Float sums: 8 partial sums, error far below the 1e-5 the
 * tests allow against the tfjs form.
 */
__attribute__((target_clones("avx2", "default"))) static void exp_row(const float *row, float m, float *p, int64_t v, float *total, float *weighted) {
  float s = 0, t = 0;
  for (int64_t j = 0; j < v; j++) {
    float d = row[j] - m;
    /* Exactly 0 below -87 (float32 exp underflows there): masked logits (about -1e9) would send
       glibc's vector expf down its scalar slow path; clamped, every lane stays on the fast path. */
    float e = expf(d < -87.0f ? -87.0f : d);
    e = d < -87.0f ? 0.0f : e;
    p[j] = e;
    s += e;
    t += e * d;
  }
  float inv = 1.0f / s;
  for (int64_t j = 0; j < v; j++) p[j] *= inv;
  *total = s;
  *weighted = t;
}

/* logSoftmaxStats(z [n*v], targets [n], stats [2n] out, lse [n] out, probs [n*v] out, n, v) */
napi_value log_softmax_stats(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value a[7];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 7) return throw_type(env, "logSoftmaxStats: expected (z, targets, stats, lse, probs, n, v)");
  float *z, *stats, *lse, *probs;
  int32_t *targets;
  size_t lz, lt, ls, ll, lp;
  int64_t n, v;
  if (!f32(env, a[0], &z, &lz)) return throw_type(env, "logSoftmaxStats: z must be a Float32Array");
  if (!i32(env, a[1], &targets, &lt)) return throw_type(env, "logSoftmaxStats: targets must be an Int32Array");
  if (!f32(env, a[2], &stats, &ls)) return throw_type(env, "logSoftmaxStats: stats must be a Float32Array");
  if (!f32(env, a[3], &lse, &ll)) return throw_type(env, "logSoftmaxStats: lse must be a Float32Array");
  if (!f32(env, a[4], &probs, &lp)) return throw_type(env, "logSoftmaxStats: probs must be a Float32Array");
  if (!dims(env, a[5], a[6], &n, &v)) return throw_type(env, "logSoftmaxStats: n and v must be positive integers");
  if (lz < (size_t)(n * v) || lt < (size_t)n || ls < (size_t)(2 * n) || ll < (size_t)n || lp < (size_t)(n * v)) return throw_type(env, "logSoftmaxStats: an array is shorter than n and v say");
  for (int64_t i = 0; i < n; i++) {
    int32_t t = targets[i];
    if (t < 0 || t >= v) return throw_type(env, "logSoftmaxStats: a target id is outside [0, v)");
  }
  for (int64_t i = 0; i < n; i++) {
    const float *row = z + i * v;
    float m = row[0];
    for (int64_t j = 1; j < v; j++) m = row[j] > m ? row[j] : m;
    /* One exp per logit: S = sum e, T = sum e * (z - m), and H = log S - T / S. */
    float total = 0, weighted = 0;
    exp_row(row, m, probs + i * v, v, &total, &weighted);
    double logTotal = log((double)total);
    lse[i] = m + (float)logTotal;
    stats[i] = row[targets[i]] - lse[i];
    stats[n + i] = (float)(logTotal - (double)weighted / total);
  }
  return NULL;
}

/* logSoftmaxStatsGrad(dy [2n], z [n*v], targets [n], stats [2n], lse [n], probs [n*v], dz [n*v] out, n, v) */
napi_value log_softmax_stats_grad(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value a[9];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 9) return throw_type(env, "logSoftmaxStatsGrad: expected (dy, z, targets, stats, lse, probs, dz, n, v)");
  float *dy, *z, *stats, *lse, *probs, *dz;
  int32_t *targets;
  size_t ldy, lz, lt, ls, ll, lp, ldz;
  int64_t n, v;
  if (!f32(env, a[0], &dy, &ldy) || !f32(env, a[1], &z, &lz) || !f32(env, a[3], &stats, &ls) || !f32(env, a[4], &lse, &ll) || !f32(env, a[5], &probs, &lp) || !f32(env, a[6], &dz, &ldz)) {
    return throw_type(env, "logSoftmaxStatsGrad: dy, z, stats, lse, probs and dz must be Float32Arrays");
  }
  if (!i32(env, a[2], &targets, &lt)) return throw_type(env, "logSoftmaxStatsGrad: targets must be an Int32Array");
  if (!dims(env, a[7], a[8], &n, &v)) return throw_type(env, "logSoftmaxStatsGrad: n and v must be positive integers");
  if (ldy < (size_t)(2 * n) || lz < (size_t)(n * v) || lt < (size_t)n || ls < (size_t)(2 * n) || ll < (size_t)n || lp < (size_t)(n * v) || ldz < (size_t)(n * v)) {
    return throw_type(env, "logSoftmaxStatsGrad: an array is shorter than n and v say");
  }
  for (int64_t i = 0; i < n; i++) {
    const float *row = z + i * v;
    const float *p = probs + i * v;
    float *out = dz + i * v;
    float dLogp = dy[i], dH = dy[n + i], shift = stats[n + i] - lse[i];
    /* logp + H = z - lse + H */
    for (int64_t j = 0; j < v; j++) out[j] = -p[j] * (dLogp + dH * (row[j] + shift));
    int32_t t = targets[i];
    if (t >= 0 && t < v) out[t] += dLogp;
  }
  return NULL;
}
