/*
 * One Adam step of one variable in one pass (issue #20): the thirteen tfjs kernels of
 * `AdamOptimizer.applyGradients` per variable (mul, add, square, div, sqrt, ...), each a full pass
 * over the weights in 128-bit wasm SIMD, become one pass here, vectorised for AVX-512 where the CPU
 * has it (target_clones picks at load time) with a portable path.
 *
 * Bit for bit the tfjs form: the same float32 operations in the same order, each rounded (this file
 * is built without -ffast-math and without FMA contraction, see scripts/build-native.mjs):
 *   m' = m*b1 + g*c1;  v' = v*b2 + (g*g)*c2;
 *   w' = ((m'/oneMinusAccB1) / (sqrt(v'/oneMinusAccB2) + eps)) * negLr + w
 * with c1 = f32(1 - beta1), c2 = f32(1 - beta2), as tfjs computes them.
 */
#include <math.h>
#include <node_api.h>
#include <stdint.h>

#include "napi_arrays.h"

__attribute__((target_clones("avx512f", "avx2", "default"))) static void adam_step(const float *restrict w, const float *restrict m, const float *restrict v, const float *restrict g, float *restrict wOut, float *restrict mOut, float *restrict vOut, int64_t n, float b1, float c1, float b2, float c2, float oneMinusAccB1, float oneMinusAccB2, float eps, float negLr) {
  for (int64_t i = 0; i < n; i++) {
    float gi = g[i];
    float m1 = m[i] * b1 + gi * c1;
    float v1 = v[i] * b2 + (gi * gi) * c2;
    float mh = m1 / oneMinusAccB1;
    float vh = v1 / oneMinusAccB2;
    wOut[i] = (mh / (sqrtf(vh) + eps)) * negLr + w[i];
    mOut[i] = m1;
    vOut[i] = v1;
  }
}

/* adamStep(w, m, v, g, wOut, mOut, vOut, b1, c1, b2, c2, oneMinusAccB1, oneMinusAccB2, eps, negLr): all arrays of one length. */
napi_value adam_step_js(napi_env env, napi_callback_info info) {
  size_t argc = 15;
  napi_value a[15];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 15) return throw_type(env, "adamStep: expected (w, m, v, g, wOut, mOut, vOut, b1, c1, b2, c2, oneMinusAccB1, oneMinusAccB2, eps, negLr)");
  float *arrays[7];
  size_t lengths[7];
  for (int i = 0; i < 7; i++) {
    if (!f32(env, a[i], &arrays[i], &lengths[i])) return throw_type(env, "adamStep: w, m, v, g, wOut, mOut and vOut must be Float32Arrays");
    if (lengths[i] != lengths[0]) return throw_type(env, "adamStep: w, m, v, g, wOut, mOut and vOut must have one length");
  }
  double s[8];
  for (int i = 0; i < 8; i++) {
    if (napi_get_value_double(env, a[7 + i], &s[i]) != napi_ok) return throw_type(env, "adamStep: b1, c1, b2, c2, oneMinusAccB1, oneMinusAccB2, eps and negLr must be numbers");
  }
  adam_step(arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], arrays[5], arrays[6], (int64_t)lengths[0], (float)s[0], (float)s[1], (float)s[2], (float)s[3], (float)s[4], (float)s[5], (float)s[6], (float)s[7]);
  return NULL;
}

/*
 * The same step with the moments in place in memory outside the wasm heap (issue #31: Adam's state
 * of a 135M model is 1 GiB, which the 4 GiB heap cannot spare) and the global-norm clip folded in:
 * g is first scaled by `scale` (tfjs' `mul(g, scale)`, one float32 rounding), so the clipped copy of
 * every gradient is never made. Same bits as adam_step on `g * scale`.
 */
__attribute__((target_clones("avx512f", "avx2", "default"))) static void adam_step_host(const float *restrict w, const float *restrict g, float *restrict wOut, float *restrict m, float *restrict v, int64_t n, float scale, float b1, float c1, float b2, float c2, float oneMinusAccB1, float oneMinusAccB2, float eps, float negLr) {
  for (int64_t i = 0; i < n; i++) {
    float gi = g[i] * scale;
    float m1 = m[i] * b1 + gi * c1;
    float v1 = v[i] * b2 + (gi * gi) * c2;
    float mh = m1 / oneMinusAccB1;
    float vh = v1 / oneMinusAccB2;
    wOut[i] = (mh / (sqrtf(vh) + eps)) * negLr + w[i];
    m[i] = m1;
    v[i] = v1;
  }
}

/* adamStepHost(w, g, wOut, m, v, scale, b1, c1, b2, c2, oneMinusAccB1, oneMinusAccB2, eps, negLr): m and v updated in place. */
napi_value adam_step_host_js(napi_env env, napi_callback_info info) {
  size_t argc = 14;
  napi_value a[14];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 14) return throw_type(env, "adamStepHost: expected (w, g, wOut, m, v, scale, b1, c1, b2, c2, oneMinusAccB1, oneMinusAccB2, eps, negLr)");
  float *arrays[5];
  size_t lengths[5];
  for (int i = 0; i < 5; i++) {
    if (!f32(env, a[i], &arrays[i], &lengths[i])) return throw_type(env, "adamStepHost: w, g, wOut, m and v must be Float32Arrays");
    if (lengths[i] != lengths[0]) return throw_type(env, "adamStepHost: w, g, wOut, m and v must have one length");
  }
  if (arrays[2] == arrays[0] || arrays[2] == arrays[1] || arrays[3] == arrays[4]) return throw_type(env, "adamStepHost: wOut must not be w or g, nor m be v");
  double s[9];
  for (int i = 0; i < 9; i++) {
    if (napi_get_value_double(env, a[5 + i], &s[i]) != napi_ok) return throw_type(env, "adamStepHost: scale, b1, c1, b2, c2, oneMinusAccB1, oneMinusAccB2, eps and negLr must be numbers");
  }
  adam_step_host(arrays[0], arrays[1], arrays[2], arrays[3], arrays[4], (int64_t)lengths[0], (float)s[0], (float)s[1], (float)s[2], (float)s[3], (float)s[4], (float)s[5], (float)s[6], (float)s[7], (float)s[8]);
  return NULL;
}
