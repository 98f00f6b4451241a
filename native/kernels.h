/*
 * Kernels shared between the addon's C files (issue #31: the native decode step, decode_step.c,
 * runs the same sgemm/sgemv calls, RMSNorm, SwiGLU gate, RoPE and decode attention as the
 * per-kernel path, so that both give the same bits).
 */
#ifndef TURNWISE_KERNELS_H
#define TURNWISE_KERNELS_H
#include <stdint.h>

/* c [m, n] = a [m, k] . b, b stored [k, n] (or [n, k] when trans_b): the call sgemmBatch makes for one item (sgemv when m = 1). 0 when no BLAS is open. */
int tw_matmul(int64_t m, int64_t n, int64_t k, const float *a, const float *b, int trans_b, float *c);
/* c [m, n] = alpha * op(a) . op(b) + beta * c, row-major, op = transpose when trans_*: one CBLAS sgemm. 0 when no BLAS is open. */
int tw_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc);
/* y = x * inv[r] * w per row of d; inv [rows]. */
void tw_rms_norm(const float *x, const float *w, float *y, float *inv, int64_t rows, int64_t d, float eps);
/* h = silu(g) * u over n values. */
void tw_swiglu(const float *g, const float *u, float *h, int64_t n);
/* y = x * cos + rotate_half(x) * sin; x [b, h, t, hd], cos/sin [b, t, hd]. */
void tw_rope(const float *x, const float *cos, const float *sin, float *y, int64_t b, int64_t h, int64_t t, int64_t hd);
/* decodeAttention's work (decode_attention.c); 0 when out of memory. */
int tw_decode_attention(const float *q, const float *keys, const float *values, const uint8_t *past_mask, const uint8_t *new_mask, float *out, int64_t rows, int64_t heads, int64_t kv_heads,
                        int64_t queries, int64_t head_dim, int64_t past, int64_t capacity);

#endif
