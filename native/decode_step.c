/*
 * One decoder layer of a decode step, one new token per row, in one call (issue #31). Why: at the
 * SmolLM2-135M shape a step through tfjs ran ~25 kernels per layer (projections, bias and residual
 * adds, head transposes, the cache's read-back and write), and outside the matrix products that
 * cost 35 ms a step at B = 1 (40 % of it), 70 ms at B = 16 and 85 ms at B = 64 (a fifth). Here the
 * layer is the same calls in the same order — the sgemm/sgemv of sgemmBatch, lora.c's accumulated
 * LoRA product, layers.c's RMSNorm, SwiGLU gate and RoPE, decode_attention.c's attention, float adds
 * for biases and residuals — on views of the weights in the wasm heap and of the KV cache in place,
 * so it gives the per-kernel path's bits (tested).
 *
 * Built without -ffast-math and without FMA contraction (scripts/build-native.mjs): the adds are
 * tfjs' separately rounded float32 operations.
 *
 * x [rows, d] is updated in place (the residual stream). Weights are stored [in, out]; LoRA pairs
 * A [in, r], B [r, out] add `scale * (in . A) . B`. The new key and value of each row go to cache
 * slot `slot` (keys/values [rows, kvHeads, capacity, headDim]); attention sees the cached slots the
 * past mask allows and the new one.
 */
#include <node_api.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "kernels.h"
#include "napi_arrays.h"

enum { IN_NORM, WQ, BQ, WK, BK, WV, BV, WO, BO, Q_NORM, K_NORM, POST_NORM, WG, BG, WU, BU, WD, BD, TENSORS };
enum { PQ, PK, PV, PO, PG, PU, PD, PROJECTIONS };
enum { ROWS, D, HEADS, KV_HEADS, HEAD_DIM, FFN, SLOT, CAPACITY, RANK, DIMS };

/*
 * Thread-CPU seconds per phase of the decode step (decodeProfile): where a step's time goes. Off
 * until the first decodeProfile call, so that ordinary decoding makes no clock calls (about 13 a
 * layer, each a system call for a thread's CPU clock).
 */
enum { T_NORM, T_QKV, T_QK_ROPE, T_CACHE, T_ATTENTION, T_O, T_ADDS, T_GATE_UP, T_SWIGLU, T_DOWN, T_HEAD, PHASES };
static double phase_seconds[PHASES];
static int profiling = 0;
static double thread_now(void) {
  if (!profiling) return 0;
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
/* Charges the time since *mark to `phase` and moves the mark (nothing while profiling is off). */
static void charge(int phase, double *mark) {
  if (!profiling) return;
  const double now = thread_now();
  phase_seconds[phase] += now - *mark;
  *mark = now;
}

typedef struct {
  const float *a, *b; /* LoRA A [in, r], B [r, out], or NULL */
  float scale;
} Lora;

/*
 * y [rows, out] = x . W (+ scale * (x . A) . B) (+ bias), in the per-kernel path's order: the fused
 * LoRA projection of lora.c (the adapter's product accumulated by sgemm with alpha = scale), then
 * the bias add.
 */
static void project(const float *x, int64_t rows, int64_t in, int64_t out, const float *w, const float *bias, const Lora *lora, int64_t rank, float *y, float *t1) {
  tw_matmul(rows, out, in, x, w, 0, y);
  if (lora->a != NULL) {
    tw_matmul(rows, rank, in, x, lora->a, 0, t1);
    tw_gemm(0, 0, rows, out, rank, lora->scale, t1, rank, lora->b, out, 1.0f, y, out);
  }
  if (bias != NULL) {
    for (int64_t r = 0; r < rows; r++)
      for (int64_t j = 0; j < out; j++) y[r * out + j] = y[r * out + j] + bias[j];
  }
}

/* Floats of scratch one call needs (decodeLayerScratch in JS computes the same). */
static int64_t scratch_floats(const int64_t *n) {
  const int64_t rows = n[ROWS], d = n[D], q = n[HEADS] * n[HEAD_DIM], kv = n[KV_HEADS] * n[HEAD_DIM], f = n[FFN];
  const int64_t wide = d > f ? d : f;
  /* h, inv (one per head row of the q/k norms), q, k, v, normed q and k, roped q and k, ctx, projection out, g, u, gate out, LoRA's x . A */
  return rows * (d + n[HEADS] + 4 * q + 4 * kv + wide + 3 * f + n[RANK]);
}

/*
 * decodeLayer(x, tensors[18], lora[14], scales[7], keys, values, pastMask, newMask, cos, sin, dims Int32Array[9], eps, scratch)
 * tensors: inNorm, wq, bq, wk, bk, wv, bv, wo, bo, qNorm, kNorm, postNorm, wg, bg, wu, bu, wd, bd (null where absent);
 * lora: A and B of q, k, v, o, gate, up, down (null where absent); dims: rows, d, heads, kvHeads, headDim, ffn, slot, capacity, rank.
 */
napi_value decode_layer_js(napi_env env, napi_callback_info info) {
  size_t argc = 13;
  napi_value a[13];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 13) return throw_type(env, "decodeLayer: expected 13 arguments");
  int32_t *dims32;
  size_t ld;
  if (!i32(env, a[10], &dims32, &ld) || ld < DIMS) return throw_type(env, "decodeLayer: dims must be an Int32Array of 9");
  int64_t n[DIMS];
  for (int i = 0; i < DIMS; i++) n[i] = dims32[i];
  const int64_t rows = n[ROWS], d = n[D], heads = n[HEADS], kvh = n[KV_HEADS], hd = n[HEAD_DIM], f = n[FFN], slot = n[SLOT], cap = n[CAPACITY], rank = n[RANK];
  if (rows < 1 || d < 1 || heads < 1 || kvh < 1 || heads % kvh != 0 || hd < 2 || f < 1 || slot < 0 || slot >= cap || rank < 0) return throw_type(env, "decodeLayer: bad dims");
  const int64_t qw = heads * hd, kw = kvh * hd;
  float *x, *keys, *values, *cos, *sin, *scratch;
  uint8_t *past_mask, *new_mask;
  size_t lx, lk, lv, lc, ls, lsc, lp, ln;
  if (!f32(env, a[0], &x, &lx) || lx < (size_t)(rows * d)) return throw_type(env, "decodeLayer: x must be a Float32Array of rows * d");
  if (!f32(env, a[4], &keys, &lk) || !f32(env, a[5], &values, &lv) || lk < (size_t)(rows * kw * cap) || lv < lk) return throw_type(env, "decodeLayer: keys and values must be Float32Arrays of rows * kvHeads * capacity * headDim");
  if (!u8(env, a[6], &past_mask, &lp) || lp < (size_t)(rows * cap) || !u8(env, a[7], &new_mask, &ln) || ln < (size_t)rows) return throw_type(env, "decodeLayer: pastMask must be a Uint8Array of rows * capacity, newMask of rows");
  if (!f32(env, a[8], &cos, &lc) || !f32(env, a[9], &sin, &ls) || lc < (size_t)(rows * hd) || ls < lc) return throw_type(env, "decodeLayer: cos and sin must be Float32Arrays of rows * headDim");
  double eps;
  if (napi_get_value_double(env, a[11], &eps) != napi_ok) return throw_type(env, "decodeLayer: eps must be a number");
  if (!f32(env, a[12], &scratch, &lsc) || (int64_t)lsc < scratch_floats(n)) return throw_type(env, "decodeLayer: scratch is too small");

  /* The weights: each a Float32Array of its shape, or null where the model has none. */
  const int64_t sizes[TENSORS] = {d, d * qw, qw, d * kw, kw, d * kw, kw, qw * d, d, hd, hd, d, d * f, f, d * f, f, f * d, d};
  const float *t[TENSORS];
  for (int i = 0; i < TENSORS; i++) {
    napi_value item;
    napi_valuetype type;
    float *p;
    size_t len;
    if (napi_get_element(env, a[1], (uint32_t)i, &item) != napi_ok || napi_typeof(env, item, &type) != napi_ok) return throw_type(env, "decodeLayer: tensors must be an array of 18");
    if (type == napi_null || type == napi_undefined) {
      t[i] = NULL;
      continue;
    }
    if (!f32(env, item, &p, &len) || (int64_t)len != sizes[i]) return throw_type(env, "decodeLayer: a tensor is not a Float32Array of its shape");
    t[i] = p;
  }
  if (t[IN_NORM] == NULL || t[WQ] == NULL || t[WK] == NULL || t[WV] == NULL || t[WO] == NULL || t[POST_NORM] == NULL || t[WG] == NULL || t[WU] == NULL || t[WD] == NULL) return throw_type(env, "decodeLayer: a weight is missing");
  const int64_t ins[PROJECTIONS] = {d, d, d, qw, d, d, f}, outs[PROJECTIONS] = {qw, kw, kw, d, f, f, d};
  Lora lora[PROJECTIONS];
  for (int i = 0; i < PROJECTIONS; i++) {
    napi_value pa, pb, ps;
    napi_valuetype ta, tb;
    double scale = 0;
    lora[i].a = lora[i].b = NULL;
    lora[i].scale = 0;
    if (napi_get_element(env, a[2], (uint32_t)(2 * i), &pa) != napi_ok || napi_get_element(env, a[2], (uint32_t)(2 * i + 1), &pb) != napi_ok || napi_typeof(env, pa, &ta) != napi_ok ||
        napi_typeof(env, pb, &tb) != napi_ok)
      return throw_type(env, "decodeLayer: lora must be an array of 14");
    if (ta == napi_null || ta == napi_undefined) continue;
    float *pA, *pB;
    size_t la, lb;
    if (rank < 1 || !f32(env, pa, &pA, &la) || !f32(env, pb, &pB, &lb) || (int64_t)la != ins[i] * rank || (int64_t)lb != rank * outs[i]) return throw_type(env, "decodeLayer: a LoRA pair does not match its projection and rank");
    if (napi_get_element(env, a[3], (uint32_t)i, &ps) != napi_ok || napi_get_value_double(env, ps, &scale) != napi_ok) return throw_type(env, "decodeLayer: scales must be an array of 7 numbers");
    lora[i].a = pA;
    lora[i].b = pB;
    lora[i].scale = (float)scale;
  }

  /* Scratch, in scratch_floats' order. */
  float *h = scratch, *inv = h + rows * d, *q = inv + rows * heads, *k = q + rows * qw, *v = k + rows * kw;
  float *qn = v + rows * kw, *kn = qn + rows * qw, *qr = kn + rows * kw, *kr = qr + rows * qw, *ctx = kr + rows * kw;
  float *y = ctx + rows * qw, *g = y + rows * (d > f ? d : f), *u = g + rows * f, *gated = u + rows * f, *t1 = gated + rows * f;

  /* Attention half. */
  double mark = thread_now();
  tw_rms_norm(x, t[IN_NORM], h, inv, rows, d, (float)eps);
  charge(T_NORM, &mark);
  project(h, rows, d, qw, t[WQ], t[BQ], &lora[PQ], rank, q, t1);
  project(h, rows, d, kw, t[WK], t[BK], &lora[PK], rank, k, t1);
  charge(T_QKV, &mark);
  const float *qin = q, *kin = k;
  if (t[Q_NORM] != NULL && t[K_NORM] != NULL) {
    tw_rms_norm(q, t[Q_NORM], qn, inv, rows * heads, hd, (float)eps);
    tw_rms_norm(k, t[K_NORM], kn, inv, rows * kvh, hd, (float)eps);
    qin = qn;
    kin = kn;
  }
  charge(T_QK_ROPE, &mark);
  project(h, rows, d, kw, t[WV], t[BV], &lora[PV], rank, v, t1);
  charge(T_QKV, &mark);
  tw_rope(qin, cos, sin, qr, rows, heads, 1, hd);
  tw_rope(kin, cos, sin, kr, rows, kvh, 1, hd);
  charge(T_QK_ROPE, &mark);
  for (int64_t r = 0; r < rows; r++) {
    for (int64_t kh = 0; kh < kvh; kh++) {
      const int64_t to = ((r * kvh + kh) * cap + slot) * hd, from = r * kw + kh * hd;
      memcpy(keys + to, kr + from, (size_t)hd * sizeof(float));
      memcpy(values + to, v + from, (size_t)hd * sizeof(float));
    }
  }
  charge(T_CACHE, &mark);
  if (!tw_decode_attention(qr, keys, values, past_mask, new_mask, ctx, rows, heads, kvh, 1, hd, slot, cap)) return throw_type(env, "decodeLayer: out of memory");
  charge(T_ATTENTION, &mark);
  project(ctx, rows, qw, d, t[WO], t[BO], &lora[PO], rank, y, t1);
  charge(T_O, &mark);
  for (int64_t i = 0; i < rows * d; i++) x[i] = x[i] + y[i];
  charge(T_ADDS, &mark);

  /* MLP half: attended + down(silu(gate(normed)) * up(normed)). */
  tw_rms_norm(x, t[POST_NORM], h, inv, rows, d, (float)eps);
  charge(T_NORM, &mark);
  project(h, rows, d, f, t[WG], t[BG], &lora[PG], rank, g, t1);
  project(h, rows, d, f, t[WU], t[BU], &lora[PU], rank, u, t1);
  charge(T_GATE_UP, &mark);
  tw_swiglu(g, u, gated, rows * f);
  charge(T_SWIGLU, &mark);
  project(gated, rows, f, d, t[WD], t[BD], &lora[PD], rank, y, t1);
  charge(T_DOWN, &mark);
  for (int64_t i = 0; i < rows * d; i++) x[i] = x[i] + y[i];
  charge(T_ADDS, &mark);
  return NULL;
}

/* decodeScratchFloats(dims Int32Array[9]): the scratch decodeLayer needs. */
napi_value decode_scratch_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value a[1], out;
  int32_t *dims32;
  size_t ld;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 1 || !i32(env, a[0], &dims32, &ld) || ld < DIMS) return throw_type(env, "decodeScratchFloats: dims must be an Int32Array of 9");
  int64_t n[DIMS];
  for (int i = 0; i < DIMS; i++) n[i] = dims32[i];
  napi_create_double(env, (double)scratch_floats(n), &out);
  return out;
}

/* decodeHead(x, rows, d, norm, head, vocab, tied, eps, logits, scratch): logits [rows, vocab] of the final RMSNorm of x. */
napi_value decode_head_js(napi_env env, napi_callback_info info) {
  size_t argc = 10;
  napi_value a[10];
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 10) return throw_type(env, "decodeHead: expected 10 arguments");
  float *x, *norm, *head, *logits, *scratch;
  size_t lx, ln, lh, ll, ls;
  int64_t rows, d, vocab;
  bool tied;
  double eps;
  if (napi_get_value_int64(env, a[1], &rows) != napi_ok || napi_get_value_int64(env, a[2], &d) != napi_ok || napi_get_value_int64(env, a[5], &vocab) != napi_ok || rows < 1 || d < 1 || vocab < 1 ||
      napi_get_value_bool(env, a[6], &tied) != napi_ok || napi_get_value_double(env, a[7], &eps) != napi_ok)
    return throw_type(env, "decodeHead: rows, d, vocab must be positive integers, tied a boolean, eps a number");
  if (!f32(env, a[0], &x, &lx) || lx < (size_t)(rows * d) || !f32(env, a[3], &norm, &ln) || (int64_t)ln != d || !f32(env, a[4], &head, &lh) || (int64_t)lh != vocab * d ||
      !f32(env, a[8], &logits, &ll) || ll < (size_t)(rows * vocab) || !f32(env, a[9], &scratch, &ls) || ls < (size_t)(rows * d + rows))
    return throw_type(env, "decodeHead: x [rows, d], norm [d], head [vocab * d], logits [rows, vocab] and scratch [rows * (d + 1)] must be Float32Arrays");
  float *h = scratch, *inv = scratch + rows * d;
  double mark = thread_now();
  tw_rms_norm(x, norm, h, inv, rows, d, (float)eps);
  /* Tied: the embedding [vocab, d], transposed; else lm_head stored [d, vocab]. */
  if (!tw_matmul(rows, vocab, d, h, head, tied ? 1 : 0, logits)) return throw_type(env, "decodeHead: no BLAS open");
  charge(T_HEAD, &mark);
  return NULL;
}

/*
 * decodeProfile(): thread-CPU seconds per phase since the last call (norm, qkv, qkNormRope, cache,
 * attention, o, adds, gateUp, swiglu, down, head), then zeroed; the first call turns profiling on
 * (and returns zeros).
 */
napi_value decode_profile_js(napi_env env, napi_callback_info info) {
  (void)info;
  profiling = 1;
  napi_value out, item;
  if (napi_create_array_with_length(env, PHASES, &out) != napi_ok) return NULL;
  for (int i = 0; i < PHASES; i++) {
    if (napi_create_double(env, phase_seconds[i], &item) != napi_ok || napi_set_element(env, out, (uint32_t)i, item) != napi_ok) return NULL;
    phase_seconds[i] = 0;
  }
  return out;
}
