/*
 * The sum of squares of many float arrays (every gradient of a model), for global-norm clipping
 * (src/algorithms/grad-clip.ts). Through tfjs it was a square and a sum kernel a tensor, two passes
 * and a full-size temporary, single-threaded while the BLAS thread waited: ~3 % of a d512 L4
 * training step. Here one pass, accumulated in double (vectorised: reassociation is allowed).
 */
#include <node_api.h>
#include <stdint.h>

#include "napi_arrays.h"

static double sum_squares(const float *x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; i++) s += (double)x[i] * (double)x[i];
  return s;
}

/* sumSquares(arrays: Float32Array[]): number */
napi_value sum_squares_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1];
  uint32_t count = 0;
  bool is_array = false;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 1 || napi_is_array(env, a[0], &is_array) != napi_ok || !is_array ||
      napi_get_array_length(env, a[0], &count) != napi_ok) {
    return throw_type(env, "sumSquares: expected an array of Float32Array");
  }
  double total = 0;
  for (uint32_t i = 0; i < count; i++) {
    napi_value item;
    float *x;
    size_t n;
    if (napi_get_element(env, a[0], i, &item) != napi_ok || !f32(env, item, &x, &n)) return throw_type(env, "sumSquares: expected an array of Float32Array");
    total += sum_squares(x, (int64_t)n);
  }
  napi_value out;
  napi_create_double(env, total, &out);
  return out;
}
