/*
 * Multi-head attention of whole sequences (the training forward and backward, the sampler's
 * prefill) as one kernel each way (issue #31). Through tfjs one layer's attention was a scale, two
 * batched sgemms of a [tq, hd] x [hd, tk] product per head and the masked softmax, and four more
 * batched sgemms and the softmax's backward in the gradient. At the default policy's shape (hd 16,
 * t 64) OpenBLAS ran those tiny products at 20-40 GFLOP/s and they were 16 % of a training step.
 * Here four query rows of a head are one pass over the keys they can see: scores, softmax and
 * context, with the keys a mask blocks for all four (the causal upper triangle, padding) skipped,
 * not scored, which halves a causal mask's work.
 *
 * Semantics: p = softmax(scale · q·kᵀ + mask) over the keys, out = p·v; query head h reads kv head
 * h / (heads / kvHeads). A mask value at or below -1e8 blocks its key (the model's -1e9 gives it a
 * probability of exactly 0 after the softmax's max subtraction in float32); a query row whose keys
 * are all blocked is computed over every key, as the tfjs form does. probs [b, h, tq, tk] is written
 * in full (0 outside a row's visible span) when the caller keeps it for the backward; an empty
 * probs array skips it (inference).
 *
 * Layouts (row-major): q, out, dq [b, h, tq, hd]; k, v, dk, dv [b, kvh, tk, hd]; mask [b, mh, tq, tk]
 * with mh 1 or h. Built with -ffast-math, as layers.c: results agree with the tfjs form to float
 * rounding, not bit for bit.
 */
#include <float.h>
#include <math.h>
#include <node_api.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "napi_arrays.h"

/* x86-64-v3 is AVX2 with FMA (a plain "avx2" clone leaves FMA out). */
#define CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define INLINE static inline __attribute__((always_inline))
/* A mask value at or below this blocks its key. */
#define BLOCKED (-1e8f)
/* Query rows handled together: each key or value vector loaded feeds this many rows' FMAs. */
#define ROWS 4

/* Eight floats: the loops over keys and over a head's features are written in these (GCC vector extension, lowered per clone). */
typedef float v8 __attribute__((vector_size(32)));

INLINE v8 load8(const float *p) {
  v8 v;
  memcpy(&v, p, sizeof v);
  return v;
}

INLINE void store8(float *p, v8 v) { memcpy(p, &v, sizeof v); }

/*
 * *p in every lane. Written as a copy of eight loads of *p, which GCC turns into one vbroadcastss;
 * a {x, x, ...} literal or a vector-scalar add is built lane by lane (vinsertps): 1.5-2x slower here.
 */
INLINE v8 splat8(const float *p) {
  float lanes[8];
  for (int i = 0; i < 8; i++) lanes[i] = *p;
  return load8(lanes);
}

typedef struct {
  int64_t b, h, kvh, tq, tk, hd, mh;
  float scale;
} Dims;

/* Keys rounded up to whole vectors: the transposed key/value rows and the score rows are this long. */
static inline int64_t padded(int64_t tk) { return (tk + 7) & ~(int64_t)7; }

/*
 * exp(x) for x <= 0 that is exactly 0 below -87 (where float32 exp underflows anyway). Why: glibc's
 * vector expf sends lanes outside its range (masked scores are about -1e9) down a scalar slow path,
 * which made a causal softmax 7x slower; clamped, every lane stays on the fast path.
 */
INLINE float exp_nonpositive(float x) {
  float e = expf(x < -87.0f ? -87.0f : x);
  return x < -87.0f ? 0.0f : e;
}

/* The visible span [lo, hi) of every mask row (b * mh * tq of them): the first key not blocked to one past the last; all keys when every one is blocked. */
static void visible_spans(const float *restrict mask, const Dims *d, int32_t *restrict lo, int32_t *restrict hi) {
  const int64_t rows = d->b * d->mh * d->tq;
  for (int64_t r = 0; r < rows; r++) {
    const float *m = mask + r * d->tk;
    int64_t first = 0, last = d->tk - 1;
    while (first < d->tk && m[first] <= BLOCKED) first++;
    while (last > first && m[last] <= BLOCKED) last--;
    lo[r] = first == d->tk ? 0 : (int32_t)first;
    hi[r] = first == d->tk ? (int32_t)d->tk : (int32_t)(last + 1);
  }
}

/* dst [hd, padded(tk)] = src [tk, hd] transposed, zero past tk: the score loops then run along the keys. */
static void transpose_rows(const float *restrict src, int64_t tk, int64_t hd, float *restrict dst) {
  const int64_t width = padded(tk);
  for (int64_t c = 0; c < hd; c++) {
    for (int64_t j = 0; j < tk; j++) dst[c * width + j] = src[j * hd + c];
    for (int64_t j = tk; j < width; j++) dst[c * width + j] = 0;
  }
}

/*
 * s[r][j] = Σ_c x[r][c] · t[c][j] for R rows over the whole vectors of keys that cover [lo, hi);
 * t is [hd, width], s rows `width` apart. Two key vectors at a time: 2R independent accumulators.
 */
INLINE void dots_rows(const float *const *restrict x, const float *restrict t, int64_t width, int64_t hd, int64_t lo, int64_t hi, float *restrict s, const int R) {
  int64_t j = lo & ~(int64_t)7;
  for (; j + 8 < hi; j += 16) {
    v8 a[R], b[R];
    for (int r = 0; r < R; r++) a[r] = b[r] = (v8){0};
    for (int64_t c = 0; c < hd; c++) {
      const v8 t0 = load8(t + c * width + j), t1 = load8(t + c * width + j + 8);
      for (int r = 0; r < R; r++) {
        const v8 xc = splat8(&x[r][c]);
        a[r] += xc * t0;
        b[r] += xc * t1;
      }
    }
    for (int r = 0; r < R; r++) {
      store8(s + r * width + j, a[r]);
      store8(s + r * width + j + 8, b[r]);
    }
  }
  for (; j < hi; j += 8) {
    v8 a[R];
    for (int r = 0; r < R; r++) a[r] = (v8){0};
    for (int64_t c = 0; c < hd; c++) {
      const v8 t0 = load8(t + c * width + j);
      for (int r = 0; r < R; r++) a[r] += splat8(&x[r][c]) * t0;
    }
    for (int r = 0; r < R; r++) store8(s + r * width + j, a[r]);
  }
}

/* out[r][c] = Σ_{j in [lo, hi)} w[r][j] · rows[j][c] (w rows `width` apart, rows [tk, hd]); hd a multiple of 16: sixteen features of R rows at a time in registers. */
INLINE void weighted_rows(const float *restrict w, int64_t width, const float *restrict rows, int64_t lo, int64_t hi, float *const *restrict out, int64_t hd, const int R) {
  for (int64_t c = 0; c < hd; c += 16) {
    v8 a[R], b[R];
    for (int r = 0; r < R; r++) a[r] = b[r] = (v8){0};
    for (int64_t j = lo; j < hi; j++) {
      const v8 r0 = load8(rows + j * hd + c), r1 = load8(rows + j * hd + c + 8);
      for (int r = 0; r < R; r++) {
        const v8 wj = splat8(&w[r * width + j]);
        a[r] += wj * r0;
        b[r] += wj * r1;
      }
    }
    for (int r = 0; r < R; r++) {
      store8(out[r] + c, a[r]);
      store8(out[r] + c + 8, b[r]);
    }
  }
}

/* rows[j][c] += Σ_r w[r][j] · x[r][c] for j in [lo, hi); hd a multiple of 16. */
INLINE void scatter_rows(const float *restrict w, int64_t width, const float *const *restrict x, float *restrict rows, int64_t lo, int64_t hi, int64_t hd, const int R) {
  for (int64_t c = 0; c < hd; c += 16) {
    v8 xa[R], xb[R];
    for (int r = 0; r < R; r++) {
      xa[r] = load8(x[r] + c);
      xb[r] = load8(x[r] + c + 8);
    }
    for (int64_t j = lo; j < hi; j++) {
      v8 a = load8(rows + j * hd + c), b = load8(rows + j * hd + c + 8);
      for (int r = 0; r < R; r++) {
        const v8 wj = splat8(&w[r * width + j]);
        a += wj * xa[r];
        b += wj * xb[r];
      }
      store8(rows + j * hd + c, a);
      store8(rows + j * hd + c + 8, b);
    }
  }
}

/* The same two for any hd (plain loops). */
INLINE void weighted_rows_any(const float *restrict w, int64_t width, const float *restrict rows, int64_t lo, int64_t hi, float *const *restrict out, int64_t hd, const int R) {
  for (int r = 0; r < R; r++) {
    for (int64_t c = 0; c < hd; c++) out[r][c] = 0;
    for (int64_t j = lo; j < hi; j++) {
      for (int64_t c = 0; c < hd; c++) out[r][c] += w[r * width + j] * rows[j * hd + c];
    }
  }
}

INLINE void scatter_rows_any(const float *restrict w, int64_t width, const float *const *restrict x, float *restrict rows, int64_t lo, int64_t hi, int64_t hd, const int R) {
  for (int64_t j = lo; j < hi; j++) {
    for (int r = 0; r < R; r++) {
      for (int64_t c = 0; c < hd; c++) rows[j * hd + c] += w[r * width + j] * x[r][c];
    }
  }
}

/* The union [lo, hi) of R consecutive mask rows' visible spans. */
INLINE void union_span(const int32_t *restrict lo, const int32_t *restrict hi, int64_t mrow, int64_t *l, int64_t *u, const int R) {
  *l = lo[mrow];
  *u = hi[mrow];
  for (int r = 1; r < R; r++) {
    *l = lo[mrow + r] < *l ? lo[mrow + r] : *l;
    *u = hi[mrow + r] > *u ? hi[mrow + r] : *u;
  }
}

/*
 * R query rows i.. of one head: scores over the union of their spans, each row's softmax over its
 * own span (0 elsewhere in the union), the context, and the rows of probs when kept. `vec`: hd is
 * a multiple of 16.
 */
INLINE void forward_rows(const float *restrict q, const float *restrict keys_t, const float *restrict values, const float *restrict mask, float *restrict out, float *restrict probs, const Dims *d,
                         int64_t bi, int64_t head, int64_t i, const int32_t *restrict lo, const int32_t *restrict hi, float *restrict s, const bool vec, const int R) {
  const int64_t tq = d->tq, tk = d->tk, width = padded(tk);
  const int64_t mrow = (bi * d->mh + (d->mh == 1 ? 0 : head)) * tq + i;
  const float scale = d->scale;
  int64_t l, u;
  union_span(lo, hi, mrow, &l, &u, R);
  const float *x[R];
  float *o[R];
  for (int r = 0; r < R; r++) {
    x[r] = q + ((bi * d->h + head) * tq + i + r) * d->hd;
    o[r] = out + ((bi * d->h + head) * tq + i + r) * d->hd;
  }
  dots_rows(x, keys_t, width, d->hd, l, u, s, R);
  for (int r = 0; r < R; r++) {
    const int64_t lr = lo[mrow + r], ur = hi[mrow + r];
    const float *restrict mr = mask + (mrow + r) * tk;
    float *restrict sr = s + r * width;
    float max = -FLT_MAX; /* not -INFINITY: -ffast-math assumes finite values */
    for (int64_t j = lr; j < ur; j++) {
      sr[j] = sr[j] * scale + mr[j];
      max = fmaxf(max, sr[j]);
    }
    float total = 0;
    for (int64_t j = lr; j < ur; j++) {
      sr[j] = exp_nonpositive(sr[j] - max);
      total += sr[j];
    }
    const float inv = 1.0f / total;
    for (int64_t j = l; j < lr; j++) sr[j] = 0;
    for (int64_t j = lr; j < ur; j++) sr[j] *= inv;
    for (int64_t j = ur; j < u; j++) sr[j] = 0;
    if (probs != NULL) {
      float *restrict p = probs + ((bi * d->h + head) * tq + i + r) * tk;
      for (int64_t j = 0; j < l; j++) p[j] = 0;
      for (int64_t j = l; j < u; j++) p[j] = sr[j];
      for (int64_t j = u; j < tk; j++) p[j] = 0;
    }
  }
  if (vec) weighted_rows(s, width, values, l, u, o, d->hd, R);
  else weighted_rows_any(s, width, values, l, u, o, d->hd, R);
}

CLONES static void attention_fwd(const float *restrict q, const float *restrict k, const float *restrict v, const float *restrict mask, float *restrict out, float *restrict probs, const Dims *d,
                                 const int32_t *restrict lo, const int32_t *restrict hi, float *restrict keys_t, float *restrict s) {
  const int64_t g = d->h / d->kvh, block = d->tk * d->hd;
  const bool vec = d->hd % 16 == 0;
  for (int64_t bi = 0; bi < d->b; bi++) {
    for (int64_t kv = 0; kv < d->kvh; kv++) {
      const float *values = v + (bi * d->kvh + kv) * block;
      transpose_rows(k + (bi * d->kvh + kv) * block, d->tk, d->hd, keys_t);
      for (int64_t head = kv * g; head < (kv + 1) * g; head++) {
        int64_t i = 0;
        for (; i + ROWS <= d->tq; i += ROWS) forward_rows(q, keys_t, values, mask, out, probs, d, bi, head, i, lo, hi, s, vec, ROWS);
        for (; i < d->tq; i++) forward_rows(q, keys_t, values, mask, out, probs, d, bi, head, i, lo, hi, s, vec, 1);
      }
    }
  }
}

/*
 * R query rows i.. of one head in the backward, over the union of their spans (p is 0 outside a
 * row's own): dp = dout·vᵀ, ds = scale · p ⊙ (dp − Σ p·dp), dq = ds·k, dk += dsᵀ·q, dv += pᵀ·dout.
 */
INLINE void backward_rows(const float *restrict dout, const float *restrict q, const float *restrict keys, const float *restrict values_t, const float *restrict probs, float *restrict dq,
                          float *restrict dkeys, float *restrict dvalues, const Dims *d, int64_t bi, int64_t head, int64_t i, const int32_t *restrict lo, const int32_t *restrict hi,
                          float *restrict ds, float *restrict pr, const bool vec, const int R) {
  const int64_t tq = d->tq, tk = d->tk, width = padded(tk);
  const int64_t mrow = (bi * d->mh + (d->mh == 1 ? 0 : head)) * tq + i;
  const float scale = d->scale;
  int64_t l, u;
  union_span(lo, hi, mrow, &l, &u, R);
  const float *g[R], *x[R];
  float *dx[R];
  for (int r = 0; r < R; r++) {
    const int64_t row = ((bi * d->h + head) * tq + i + r) * d->hd;
    g[r] = dout + row;
    x[r] = q + row;
    dx[r] = dq + row;
  }
  dots_rows(g, values_t, width, d->hd, l, u, ds, R);
  for (int r = 0; r < R; r++) {
    const float *restrict p = probs + ((bi * d->h + head) * tq + i + r) * tk;
    float *restrict dsr = ds + r * width, *restrict prr = pr + r * width;
    float dot = 0;
    for (int64_t j = l; j < u; j++) {
      prr[j] = p[j];
      dot += p[j] * dsr[j];
    }
    for (int64_t j = l; j < u; j++) dsr[j] = scale * p[j] * (dsr[j] - dot);
  }
  if (vec) {
    weighted_rows(ds, width, keys, l, u, dx, d->hd, R);
    scatter_rows(ds, width, x, dkeys, l, u, d->hd, R);
    scatter_rows(pr, width, g, dvalues, l, u, d->hd, R);
  } else {
    weighted_rows_any(ds, width, keys, l, u, dx, d->hd, R);
    scatter_rows_any(ds, width, x, dkeys, l, u, d->hd, R);
    scatter_rows_any(pr, width, g, dvalues, l, u, d->hd, R);
  }
}

/* The gradients of attention_fwd; dk and dv (summed over the query heads that read a kv head) are zeroed here. */
CLONES static void attention_bwd(const float *restrict dout, const float *restrict q, const float *restrict k, const float *restrict v, const float *restrict probs, float *restrict dq,
                                 float *restrict dk, float *restrict dv, const Dims *d, const int32_t *restrict lo, const int32_t *restrict hi, float *restrict values_t, float *restrict ds,
                                 float *restrict pr) {
  const int64_t g = d->h / d->kvh, block = d->tk * d->hd;
  const bool vec = d->hd % 16 == 0;
  memset(dk, 0, (size_t)(d->b * d->kvh * block) * sizeof(float));
  memset(dv, 0, (size_t)(d->b * d->kvh * block) * sizeof(float));
  for (int64_t bi = 0; bi < d->b; bi++) {
    for (int64_t kv = 0; kv < d->kvh; kv++) {
      const int64_t base = (bi * d->kvh + kv) * block;
      transpose_rows(v + base, d->tk, d->hd, values_t);
      for (int64_t head = kv * g; head < (kv + 1) * g; head++) {
        int64_t i = 0;
        for (; i + ROWS <= d->tq; i += ROWS) backward_rows(dout, q, k + base, values_t, probs, dq, dk + base, dv + base, d, bi, head, i, lo, hi, ds, pr, vec, ROWS);
        for (; i < d->tq; i++) backward_rows(dout, q, k + base, values_t, probs, dq, dk + base, dv + base, d, bi, head, i, lo, hi, ds, pr, vec, 1);
      }
    }
  }
}

/* Throws "<fn>: <what>" as the addon's TypeError. */
static napi_value fail(napi_env env, const char *fn, const char *what) {
  char message[256];
  snprintf(message, sizeof message, "%s: %s", fn, what);
  return throw_type(env, message);
}

/* (b, heads, kvHeads, tq, tk, hd, maskHeads, scale) from a[0..7]; 0 when one is not of its kind. */
static int read_dims(napi_env env, napi_value *a, Dims *d) {
  int64_t n[7];
  double scale;
  if (!ints(env, a, 7, n) || napi_get_value_double(env, a[7], &scale) != napi_ok) return 0;
  *d = (Dims){.b = n[0], .h = n[1], .kvh = n[2], .tq = n[3], .tk = n[4], .hd = n[5], .mh = n[6], .scale = (float)scale};
  return 1;
}

/* NULL when the dimensions fit together, else what is wrong. */
static const char *dims_error(const Dims *d) {
  if (d->h % d->kvh != 0) return "heads must be a multiple of kvHeads";
  if (d->mh != 1 && d->mh != d->h) return "maskHeads must be 1 or heads";
  if (d->tk > INT32_MAX) return "tk must fit 32 bits";
  return NULL;
}

/* What both entry points allocate: the visible span of every mask row, and scratch rows of padded(tk) floats. */
typedef struct {
  int32_t *lo, *hi;
  float *rows;
} Scratch;

/* Allocates `rows` scratch rows and the spans of `mask`; 0 when out of memory. */
static int scratch_open(const float *mask, const Dims *d, int64_t rows, Scratch *s) {
  const int64_t spans = d->b * d->mh * d->tq;
  s->lo = malloc((size_t)spans * 2 * sizeof(int32_t));
  s->rows = malloc((size_t)(rows * padded(d->tk)) * sizeof(float));
  if (s->lo == NULL || s->rows == NULL) {
    free(s->lo);
    free(s->rows);
    return 0;
  }
  s->hi = s->lo + spans;
  visible_spans(mask, d, s->lo, s->hi);
  return 1;
}

static void scratch_close(Scratch *s) {
  free(s->lo);
  free(s->rows);
}

#define Q_FLOATS(d) ((size_t)((d).b * (d).h * (d).tq * (d).hd))
#define KV_FLOATS(d) ((size_t)((d).b * (d).kvh * (d).tk * (d).hd))
#define MASK_FLOATS(d) ((size_t)((d).b * (d).mh * (d).tq * (d).tk))
#define PROBS_FLOATS(d) ((size_t)((d).b * (d).h * (d).tq * (d).tk))

/* attentionForward(q, k, v, mask, out, probs, b, heads, kvHeads, tq, tk, hd, maskHeads, scale); probs may be empty (not kept). */
napi_value attention_forward_js(napi_env env, napi_callback_info info) {
  const char *fn = "attentionForward";
  size_t argc = 14;
  napi_value a[14];
  float *p[6];
  size_t l[6];
  Dims d;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 14 || !floats(env, a, 6, p, l) || !read_dims(env, a + 6, &d)) {
    return fail(env, fn, "expected (q, k, v, mask, out, probs: Float32Array, b, heads, kvHeads, tq, tk, hd, maskHeads: positive integers, scale: number)");
  }
  const char *error = dims_error(&d);
  if (error != NULL) return fail(env, fn, error);
  if (l[0] != Q_FLOATS(d) || l[4] != Q_FLOATS(d)) return fail(env, fn, "q and out must hold b * heads * tq * hd floats");
  if (l[1] != KV_FLOATS(d) || l[2] != KV_FLOATS(d)) return fail(env, fn, "k and v must hold b * kvHeads * tk * hd floats");
  if (l[3] != MASK_FLOATS(d)) return fail(env, fn, "mask must hold b * maskHeads * tq * tk floats");
  if (l[5] != 0 && l[5] != PROBS_FLOATS(d)) return fail(env, fn, "probs must be empty or hold b * heads * tq * tk floats");
  Scratch s; /* the transposed keys, then ROWS score rows */
  if (!scratch_open(p[3], &d, d.hd + ROWS, &s)) return fail(env, fn, "out of memory for its scratch");
  const int64_t width = padded(d.tk);
  attention_fwd(p[0], p[1], p[2], p[3], p[4], l[5] == 0 ? NULL : p[5], &d, s.lo, s.hi, s.rows, s.rows + d.hd * width);
  scratch_close(&s);
  return NULL;
}

/* attentionBackward(dout, q, k, v, mask, probs, dq, dk, dv, b, heads, kvHeads, tq, tk, hd, maskHeads, scale) */
napi_value attention_backward_js(napi_env env, napi_callback_info info) {
  const char *fn = "attentionBackward";
  size_t argc = 17;
  napi_value a[17];
  float *p[9];
  size_t l[9];
  Dims d;
  if (napi_get_cb_info(env, info, &argc, a, NULL, NULL) != napi_ok || argc < 17 || !floats(env, a, 9, p, l) || !read_dims(env, a + 9, &d)) {
    return fail(env, fn, "expected (dout, q, k, v, mask, probs, dq, dk, dv: Float32Array, b, heads, kvHeads, tq, tk, hd, maskHeads: positive integers, scale: number)");
  }
  const char *error = dims_error(&d);
  if (error != NULL) return fail(env, fn, error);
  if (l[0] != Q_FLOATS(d) || l[1] != Q_FLOATS(d) || l[6] != Q_FLOATS(d)) return fail(env, fn, "dout, q and dq must hold b * heads * tq * hd floats");
  if (l[2] != KV_FLOATS(d) || l[3] != KV_FLOATS(d) || l[7] != KV_FLOATS(d) || l[8] != KV_FLOATS(d)) return fail(env, fn, "k, v, dk and dv must hold b * kvHeads * tk * hd floats");
  if (l[4] != MASK_FLOATS(d)) return fail(env, fn, "mask must hold b * maskHeads * tq * tk floats");
  if (l[5] != PROBS_FLOATS(d)) return fail(env, fn, "probs must hold b * heads * tq * tk floats");
  Scratch s; /* the transposed values, then ROWS rows of dp/ds and ROWS of p */
  if (!scratch_open(p[4], &d, d.hd + 2 * ROWS, &s)) return fail(env, fn, "out of memory for its scratch");
  const int64_t width = padded(d.tk);
  attention_bwd(p[0], p[1], p[2], p[3], p[5], p[6], p[7], p[8], &d, s.lo, s.hi, s.rows, s.rows + d.hd * width, s.rows + (d.hd + ROWS) * width);
  scratch_close(&s);
  return NULL;
}
