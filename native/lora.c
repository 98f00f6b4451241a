/*
 * A LoRA projection `y = x . W + scale * (x . A) . B` and its gradients as CBLAS calls that
 * accumulate into their outputs (issue #31). The tfjs form is five kernels forward (three products,
 * a scale, an add) and about ten backward, each a pass over an [n, out] or [n, in] array; here the
 * adapter's product lands on the base product with sgemm's `beta = 1` and `alpha = scale`, so the
 * scale and the sums cost nothing. On a SmolLM2-135M-shaped LoRA step those passes were ~4 % of the
 * time (bench/RESULTS.md, "LoRA: one kernel per projection").
 *
 * Layouts (row-major, tfjs's): x [n, in], W [in, out], A [in, r], B [r, out], y [n, out], and the
 * adapter's hidden t = x . A [n, r], kept for the backward. Backward, with g = scale * dy . B^T:
 * dx = dy . W^T + g . A^T, dA = x^T . g, dB = scale * t^T . dy (dW = x^T . dy is a plain product,
 * taken in JS when the base weight is trainable). With LoRA dropout the adapter reads xa, x after
 * dropout, instead of x: t = xa . A, dA = xa^T . g, and x and xa get their gradients apart.
 */
#include <node_api.h>
#include <stdint.h>

#include "kernels.h"
#include "napi_arrays.h"

enum { N = 0, T = 1 };

/* Reads `count` float arrays then `dims` positive integers below 2^31 (sgemm takes int). */
static int args_of(napi_env env, napi_value *values, int count, float **arrays, size_t *lengths, int dims, int64_t *out) {
  if (!floats(env, values, count, arrays, lengths) || !ints(env, values + count, dims, out)) return 0;
  for (int i = 0; i < dims; i++) {
    if (out[i] > INT32_MAX) return 0;
  }
  return 1;
}

/* loraForward(x, xa, w, a, b, y, t, n, in, out, r, scale): xa is the adapter's input (x, or x after LoRA dropout). */
napi_value lora_forward_js(napi_env env, napi_callback_info info) {
  size_t argc = 12;
  napi_value v[12];
  float *p[7];
  size_t l[7];
  int64_t d[4];
  double scale;
  if (napi_get_cb_info(env, info, &argc, v, NULL, NULL) != napi_ok || argc < 12 || !args_of(env, v, 7, p, l, 4, d) || napi_get_value_double(env, v[11], &scale) != napi_ok) {
    return throw_type(env, "loraForward: expected (x, xa, w, a, b, y, t: Float32Array, n, in, out, r: positive integers, scale: number)");
  }
  const int64_t n = d[0], in = d[1], out = d[2], r = d[3];
  if (l[0] < (size_t)(n * in) || l[1] < (size_t)(n * in) || l[2] < (size_t)(in * out) || l[3] < (size_t)(in * r) || l[4] < (size_t)(r * out) || l[5] < (size_t)(n * out) || l[6] < (size_t)(n * r)) {
    return throw_type(env, "loraForward: an array is shorter than n, in, out and r say");
  }
  const float *x = p[0], *xa = p[1], *w = p[2], *a = p[3], *b = p[4];
  float *y = p[5], *t = p[6];
  /* tw_matmul: the products sgemmBatch makes (sgemv for one row), as the native decode step does. */
  if (!tw_matmul(n, r, in, xa, a, 0, t)) return throw_type(env, "loraForward: call open() first");
  tw_matmul(n, out, in, x, w, 0, y);
  tw_gemm(N, N, n, out, r, (float)scale, t, r, b, out, 1.0f, y, out);
  return NULL;
}

/* loraAdapterGrads(dy, x, b, t, g, da, db, n, in, out, r, scale): g = scale dy B^T, dA = x^T g, dB = scale t^T dy. */
napi_value lora_adapter_grads_js(napi_env env, napi_callback_info info) {
  size_t argc = 12;
  napi_value v[12];
  float *p[7];
  size_t l[7];
  int64_t d[4];
  double scale;
  if (napi_get_cb_info(env, info, &argc, v, NULL, NULL) != napi_ok || argc < 12 || !args_of(env, v, 7, p, l, 4, d) || napi_get_value_double(env, v[11], &scale) != napi_ok) {
    return throw_type(env, "loraAdapterGrads: expected (dy, x, b, t, g, da, db: Float32Array, n, in, out, r: positive integers, scale: number)");
  }
  const int64_t n = d[0], in = d[1], out = d[2], r = d[3];
  if (l[0] < (size_t)(n * out) || l[1] < (size_t)(n * in) || l[2] < (size_t)(r * out) || l[3] < (size_t)(n * r) || l[4] < (size_t)(n * r) || l[5] < (size_t)(in * r) || l[6] < (size_t)(r * out)) {
    return throw_type(env, "loraAdapterGrads: an array is shorter than n, in, out and r say");
  }
  const float *dy = p[0], *x = p[1], *b = p[2], *t = p[3];
  float *g = p[4], *da = p[5], *db = p[6];
  if (!tw_gemm(N, T, n, r, out, (float)scale, dy, out, b, out, 0.0f, g, r)) return throw_type(env, "loraAdapterGrads: call open() first");
  tw_gemm(T, N, in, r, n, 1.0f, x, in, g, r, 0.0f, da, r);
  tw_gemm(T, N, r, out, n, (float)scale, t, r, dy, out, 0.0f, db, out);
  return NULL;
}

/* loraInputGrad(dy, w, a, g, dx, n, in, out, r): dx = dy W^T + g A^T. */
napi_value lora_input_grad_js(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value v[9];
  float *p[5];
  size_t l[5];
  int64_t d[4];
  if (napi_get_cb_info(env, info, &argc, v, NULL, NULL) != napi_ok || argc < 9 || !args_of(env, v, 5, p, l, 4, d)) {
    return throw_type(env, "loraInputGrad: expected (dy, w, a, g, dx: Float32Array, n, in, out, r: positive integers)");
  }
  const int64_t n = d[0], in = d[1], out = d[2], r = d[3];
  if (l[0] < (size_t)(n * out) || l[1] < (size_t)(in * out) || l[2] < (size_t)(in * r) || l[3] < (size_t)(n * r) || l[4] < (size_t)(n * in)) {
    return throw_type(env, "loraInputGrad: an array is shorter than n, in, out and r say");
  }
  const float *dy = p[0], *w = p[1], *a = p[2], *g = p[3];
  float *dx = p[4];
  if (!tw_gemm(N, T, n, in, out, 1.0f, dy, out, w, out, 0.0f, dx, in)) return throw_type(env, "loraInputGrad: call open() first");
  tw_gemm(N, T, n, in, r, 1.0f, g, r, a, r, 1.0f, dx, in);
  return NULL;
}
