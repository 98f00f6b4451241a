/*
 * The packed inference forward's data movement (transformer/inference.ts and grouped-attention.ts):
 * RoPE in place on the fused q/k/v rows, and the strided block copies that stage a group's queries
 * for attention and scatter its result back. In JS these ran at 4-7 ns a float, ~6 % of a 256-token
 * SmolLM2-135M prefill. Pure copies, and RoPE in double as JS computes it (each float product is
 * exact in double, so contraction into FMA cannot change a bit): the JS forms' results exactly.
 */
#include <node_api.h>
#include <stdint.h>
#include <string.h>

#include "napi_arrays.h"

/* count blocks of width floats: src + i * src_stride -> dst + i * dst_stride. */
static void strided_copy(const float *src, int64_t src_stride, float *dst, int64_t dst_stride, int64_t count, int64_t width) {
  for (int64_t i = 0; i < count; i++) memcpy(dst + i * dst_stride, src + i * src_stride, (size_t)width * sizeof(float));
}

/* RoPE on the q and k head vectors of qkv [n, (heads + 2 kv) hd] at positions [n]; cos/sin [positions, hd]. */
static void rope_packed(float *qkv, const int32_t *positions, const float *cos, const float *sin, int64_t n, int64_t heads, int64_t kv, int64_t hd) {
  const int64_t stride = (heads + 2 * kv) * hd, half = hd / 2;
  for (int64_t t = 0; t < n; t++) {
    const float *c = cos + (int64_t)positions[t] * hd, *s = sin + (int64_t)positions[t] * hd;
    for (int64_t hv = 0; hv < heads + kv; hv++) {
      float *x = qkv + t * stride + hv * hd;
      for (int64_t i = 0; i < half; i++) {
        const double a = x[i], b = x[i + half];
        x[i] = (float)(a * c[i] - b * s[i]);
        x[i + half] = (float)(b * c[i + half] + a * s[i + half]);
      }
    }
  }
}

static int whole(napi_env env, napi_value value, int64_t *out) { return napi_get_value_int64(env, value, out) == napi_ok && *out >= 0; }

/* stridedCopy(src, srcOffset, srcStride, dst, dstOffset, dstStride, count, width) */
napi_value strided_copy_js(napi_env env, napi_callback_info info) {
  size_t argc = 8;
  napi_value a[8];
  float *src, *dst;
  size_t ls, ld;
  int64_t so, ss, d0, ds, count, width;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 8 || !f32(env, a[0], &src, &ls) || !whole(env, a[1], &so) || !whole(env, a[2], &ss) || !f32(env, a[3], &dst, &ld) ||
      !whole(env, a[4], &d0) || !whole(env, a[5], &ds) || !whole(env, a[6], &count) || !whole(env, a[7], &width)) {
    return throw_type(env, "stridedCopy: expected (src: Float32Array, srcOffset, srcStride, dst: Float32Array, dstOffset, dstStride, count, width: integers >= 0)");
  }
  if (count == 0 || width == 0) return NULL;
  if ((size_t)(so + (count - 1) * ss + width) > ls || (size_t)(d0 + (count - 1) * ds + width) > ld) return throw_type(env, "stridedCopy: a block lies past the end of its array");
  strided_copy(src + so, ss, dst + d0, ds, count, width);
  return NULL;
}

/* ropePacked(qkv, positions, cos, sin, heads, kvHeads, hd) */
napi_value rope_packed_js(napi_env env, napi_callback_info info) {
  size_t argc = 7;
  napi_value a[7];
  float *qkv, *cos, *sin;
  int32_t *positions;
  size_t lq, lp, lc, ls;
  int64_t heads, kv, hd;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 7 || !f32(env, a[0], &qkv, &lq) || !i32(env, a[1], &positions, &lp) || !f32(env, a[2], &cos, &lc) ||
      !f32(env, a[3], &sin, &ls) || !whole(env, a[4], &heads) || !whole(env, a[5], &kv) || !whole(env, a[6], &hd)) {
    return throw_type(env, "ropePacked: expected (qkv: Float32Array, positions: Int32Array, cos, sin: Float32Array, heads, kvHeads, hd: integers >= 0)");
  }
  if (hd % 2 != 0) return throw_type(env, "ropePacked: hd must be even");
  const int64_t n = (int64_t)lp;
  if ((size_t)(n * (heads + 2 * kv) * hd) != lq) return throw_type(env, "ropePacked: qkv must hold positions.length rows of (heads + 2 kvHeads) hd floats");
  for (int64_t t = 0; t < n; t++) {
    if (positions[t] < 0 || (size_t)(((int64_t)positions[t] + 1) * hd) > lc || lc != ls) return throw_type(env, "ropePacked: a position lies past the cos/sin tables");
  }
  rope_packed(qkv, positions, cos, sin, n, heads, kv, hd);
  return NULL;
}
