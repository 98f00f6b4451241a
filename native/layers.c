/*
 * The decoder's non-matmul kernels, forward and backward, one pass each (issue #20): RMSNorm, the
 * SwiGLU gate and rotary embeddings (attention is attention.c). In tfjs each is several
 * broadcast kernels (RMSNorm forward: square, mean, add, rsqrt, mul, mul; its backward a dozen
 * more), each a full pass in 128-bit wasm SIMD plus its dispatch. Built with -ffast-math, as the
 * loss head (log_softmax.c): the loops vectorise (expf through glibc's libmvec), AVX-512 where the
 * CPU has it (target_clones picks at load time), a portable path otherwise. Results agree with the
 * tfjs forms to float rounding (tests allow 1e-5 relative); no NaN/inf inputs reach them.
 *
 * Shapes (row-major): RMSNorm x [rows, d], w [d], inv [rows]; SwiGLU g, u [n]; rope x [b, h, t, hd],
 * cos/sin [b, t, hd].
 */
#include <math.h>
#include <node_api.h>
#include <stdint.h>
#include <stdlib.h>

#include "kernels.h"
#include "napi_arrays.h"

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

/* y = x * inv[r] * w, inv[r] = 1 / sqrt(mean(x[r]^2) + eps). */
CLONES static void rms_norm_fwd(const float *restrict x, const float *restrict w, float *restrict y, float *restrict inv, int64_t rows, int64_t d, float eps) {
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d;
    float s = 0;
    for (int64_t j = 0; j < d; j++) s += xr[j] * xr[j];
    float q = 1.0f / sqrtf(s / (float)d + eps);
    inv[r] = q;
    float *yr = y + r * d;
    for (int64_t j = 0; j < d; j++) yr[j] = xr[j] * q * w[j];
  }
}

/*
 * dx = inv * (dy * w) - x * inv^3 * sum(dy * w * x) / d;  dw = sum over rows of dy * x * inv.
 * dw accumulates in double: thousands of rows.
 */
CLONES static void rms_norm_bwd(const float *restrict dy, const float *restrict x, const float *restrict w, const float *restrict inv, float *restrict dx, double *restrict dw, int64_t rows, int64_t d) {
  for (int64_t j = 0; j < d; j++) dw[j] = 0;
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * d, *gr = dy + r * d;
    float q = inv[r], dot = 0;
    for (int64_t j = 0; j < d; j++) dot += gr[j] * w[j] * xr[j];
    float k = q * q * q * dot / (float)d;
    float *dxr = dx + r * d;
    for (int64_t j = 0; j < d; j++) {
      dxr[j] = q * gr[j] * w[j] - xr[j] * k;
      dw[j] += (double)(gr[j] * xr[j] * q);
    }
  }
}

/* h = silu(g) * u. */
CLONES static void swiglu_fwd(const float *restrict g, const float *restrict u, float *restrict h, int64_t n) {
  for (int64_t i = 0; i < n; i++) h[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

/* With s = sigmoid(g): du = dh * g * s;  dg = dh * u * s * (1 + g * (1 - s)). */
CLONES static void swiglu_bwd(const float *restrict dh, const float *restrict g, const float *restrict u, float *restrict dg, float *restrict du, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    float s = 1.0f / (1.0f + expf(-g[i]));
    du[i] = dh[i] * g[i] * s;
    dg[i] = dh[i] * u[i] * s * (1.0f + g[i] * (1.0f - s));
  }
}

/*
 * y = x * cos + rotate_half(x) * sin, rotate_half(x) = cat(-x[half:], x[:half]); the transpose
 * (backward: dx = dy * cos + rotate_half^T(dy * sin)) flips the sign of the other half.
 */
CLONES static void rope(const float *restrict x, const float *restrict cos, const float *restrict sin, float *restrict y, int64_t b, int64_t h, int64_t t, int64_t hd, int transpose) {
  int64_t half = hd / 2;
  for (int64_t bi = 0; bi < b; bi++) {
    for (int64_t hi = 0; hi < h; hi++) {
      for (int64_t ti = 0; ti < t; ti++) {
        const float *xr = x + ((bi * h + hi) * t + ti) * hd;
        const float *c = cos + (bi * t + ti) * hd, *s = sin + (bi * t + ti) * hd;
        float *yr = y + ((bi * h + hi) * t + ti) * hd;
        if (!transpose) {
          for (int64_t j = 0; j < half; j++) yr[j] = xr[j] * c[j] - xr[j + half] * s[j];
          for (int64_t j = half; j < hd; j++) yr[j] = xr[j] * c[j] + xr[j - half] * s[j];
        } else {
          for (int64_t j = 0; j < half; j++) yr[j] = xr[j] * c[j] + xr[j + half] * s[j + half];
          for (int64_t j = half; j < hd; j++) yr[j] = xr[j] * c[j] - xr[j - half] * s[j - half];
        }
      }
    }
  }
}

/* --- Entry points for the other C files (kernels.h). --- */

void tw_rms_norm(const float *x, const float *w, float *y, float *inv, int64_t rows, int64_t d, float eps) { rms_norm_fwd(x, w, y, inv, rows, d, eps); }
void tw_swiglu(const float *g, const float *u, float *h, int64_t n) { swiglu_fwd(g, u, h, n); }
void tw_rope(const float *x, const float *cos, const float *sin, float *y, int64_t b, int64_t h, int64_t t, int64_t hd) { rope(x, cos, sin, y, b, h, t, hd, 0); }

/* --- N-API wrappers: arrays are checked against the dimensions before any loop runs. --- */

/* rmsNormForward(x, w, y, inv, rows, d, eps) */
napi_value rms_norm_forward_js(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value a[7];
  float *p[4];
  size_t l[4];
  int64_t n[2];
  double eps;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 7 || !floats(env, a, 4, p, l) || !ints(env, a + 4, 2, n) || napi_get_value_double(env, a[6], &eps) != napi_ok) {
    return throw_type(env, "rmsNormForward: expected (x, w, y, inv: Float32Array, rows, d: positive integers, eps: number)");
  }
  int64_t rows = n[0], d = n[1];
  if (l[0] < (size_t)(rows * d) || l[1] < (size_t)d || l[2] < (size_t)(rows * d) || l[3] < (size_t)rows) return throw_type(env, "rmsNormForward: an array is shorter than rows and d say");
  rms_norm_fwd(p[0], p[1], p[2], p[3], rows, d, (float)eps);
  return NULL;
}

/* rmsNormBackward(dy, x, w, inv, dx, dw, rows, d) */
napi_value rms_norm_backward_js(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value a[8];
  float *p[6];
  size_t l[6];
  int64_t n[2];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 8 || !floats(env, a, 6, p, l) || !ints(env, a + 6, 2, n)) {
    return throw_type(env, "rmsNormBackward: expected (dy, x, w, inv, dx, dw: Float32Array, rows, d: positive integers)");
  }
  int64_t rows = n[0], d = n[1];
  if (l[0] < (size_t)(rows * d) || l[1] < (size_t)(rows * d) || l[2] < (size_t)d || l[3] < (size_t)rows || l[4] < (size_t)(rows * d) || l[5] < (size_t)d) {
    return throw_type(env, "rmsNormBackward: an array is shorter than rows and d say");
  }
  double *sums = malloc((size_t)d * sizeof(double));
  if (sums == NULL) return throw_type(env, "rmsNormBackward: out of memory");
  rms_norm_bwd(p[0], p[1], p[2], p[3], p[4], sums, rows, d);
  for (int64_t j = 0; j < d; j++) p[5][j] = (float)sums[j];
  free(sums);
  return NULL;
}

/* swiGluForward(g, u, h) */
napi_value swiglu_forward_js(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value a[3];
  float *p[3];
  size_t l[3];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 3 || !floats(env, a, 3, p, l)) return throw_type(env, "swiGluForward: expected (g, u, h: Float32Array)");
  if (l[1] != l[0] || l[2] != l[0]) return throw_type(env, "swiGluForward: g, u and h must have one length");
  swiglu_fwd(p[0], p[1], p[2], (int64_t)l[0]);
  return NULL;
}

/* swiGluBackward(dh, g, u, dg, du) */
napi_value swiglu_backward_js(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value a[5];
  float *p[5];
  size_t l[5];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 5 || !floats(env, a, 5, p, l)) return throw_type(env, "swiGluBackward: expected (dh, g, u, dg, du: Float32Array)");
  for (int i = 1; i < 5; i++) {
    if (l[i] != l[0]) return throw_type(env, "swiGluBackward: dh, g, u, dg and du must have one length");
  }
  swiglu_bwd(p[0], p[1], p[2], p[3], p[4], (int64_t)l[0]);
  return NULL;
}

/* rope(x, cos, sin, y, b, h, t, hd, transpose) */
napi_value rope_js(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value a[9];
  float *p[4];
  size_t l[4];
  int64_t n[4];
  bool transpose = false;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 9 || !floats(env, a, 4, p, l) || !ints(env, a + 4, 4, n) || napi_get_value_bool(env, a[8], &transpose) != napi_ok) {
    return throw_type(env, "rope: expected (x, cos, sin, y: Float32Array, b, h, t, hd: positive integers, transpose: boolean)");
  }
  int64_t b = n[0], h = n[1], t = n[2], hd = n[3];
  if (hd % 2 != 0) return throw_type(env, "rope: hd must be even");
  if (l[0] < (size_t)(b * h * t * hd) || l[1] < (size_t)(b * t * hd) || l[2] < (size_t)(b * t * hd) || l[3] < (size_t)(b * h * t * hd)) return throw_type(env, "rope: an array is shorter than b, h, t and hd say");
  rope(p[0], p[1], p[2], p[3], b, h, t, hd, transpose);
  return NULL;
}
