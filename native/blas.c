/*
 * turnwise_blas: an optional native path for the tfjs wasm backend's heaviest training kernels
 * (issue #10): matrix products here, the loss head's log-softmax statistics in log_softmax.c.
 *
 * One N-API function runs a whole BatchMatMul (every batch item, any transposes) as CBLAS sgemm
 * calls on Float32Arrays that are views of the wasm heap, so no operand is copied or transposed.
 * The BLAS library is opened with dlopen at load time (OpenBLAS first), so the addon builds with
 * nothing but a C compiler and Node's headers, and a machine without a BLAS simply reports why.
 */
#include <dlfcn.h>
#include <node_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels.h"
#include "napi_arrays.h"

enum { ROW_MAJOR = 101, NO_TRANS = 111, TRANS = 112 };
typedef void (*sgemm_fn)(int order, int transA, int transB, int m, int n, int k, float alpha, const float *a, int lda, const float *b, int ldb, float beta, float *c, int ldc);
typedef void (*sgemv_fn)(int order, int trans, int m, int n, float alpha, const float *a, int lda, const float *x, int incx, float beta, float *y, int incy);
typedef void (*set_threads_fn)(int);
typedef int (*get_threads_fn)(void);
typedef char *(*corename_fn)(void);

static sgemm_fn sgemm = NULL;
static sgemv_fn sgemv = NULL;
static set_threads_fn set_threads = NULL;
static get_threads_fn get_threads = NULL;
static corename_fn corename = NULL;
static char library[256] = "";

#define CHECK(env, call)                                                   \
  do {                                                                     \
    if ((call) != napi_ok) {                                               \
      napi_throw_error((env), "TURNWISE_BLAS", "N-API call failed: " #call); \
      return NULL;                                                         \
    }                                                                      \
  } while (0)

/* Appends "name (why); " to the list of libraries tried, truncating at the buffer's end. */
static void note_tried(char *tried, size_t size, const char *name, const char *why) {
  size_t used = strlen(tried);
  if (used < size) snprintf(tried + used, size - used, "%s (%s); ", name, why);
}

/*
 * open(candidates: string[], coreType?: string): string — the library that provided cblas_sgemm.
 * A non-empty coreType becomes OPENBLAS_CORETYPE (unless the environment has one) before the first
 * dlopen: OpenBLAS reads it once, when it loads (src/backend/openblas-core-type.ts says why).
 */
static napi_value open_blas(napi_env env, napi_callback_info info) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (sgemm != NULL) {
    napi_value out;
    CHECK(env, napi_create_string_utf8(env, library, NAPI_AUTO_LENGTH, &out));
    return out;
  }
  if (argc >= 2) {
    char core[64];
    size_t core_len = 0;
    napi_valuetype type;
    CHECK(env, napi_typeof(env, argv[1], &type));
    if (type != napi_undefined) {
      if (type != napi_string || napi_get_value_string_utf8(env, argv[1], core, sizeof core, &core_len) != napi_ok) return throw_type(env, "open: coreType must be a string");
      if (core_len > 0 && getenv("OPENBLAS_CORETYPE") == NULL) setenv("OPENBLAS_CORETYPE", core, 0);
    }
  }
  uint32_t count = 0;
  if (argc < 1 || napi_get_array_length(env, argv[0], &count) != napi_ok) return throw_type(env, "open: expected an array of library names");
  char tried[1024] = "";
  for (uint32_t i = 0; i < count; i++) {
    napi_value item;
    char name[256];
    size_t len = 0;
    CHECK(env, napi_get_element(env, argv[0], i, &item));
    if (napi_get_value_string_utf8(env, item, name, sizeof name, &len) != napi_ok) return throw_type(env, "open: library names must be strings");
    void *handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
      note_tried(tried, sizeof tried, name, "not found");
      continue;
    }
    sgemm_fn f = (sgemm_fn)dlsym(handle, "cblas_sgemm");
    if (f == NULL) {
      note_tried(tried, sizeof tried, name, "no cblas_sgemm");
      dlclose(handle);
      continue;
    }
    sgemm = f;
    sgemv = (sgemv_fn)dlsym(handle, "cblas_sgemv");
    set_threads = (set_threads_fn)dlsym(handle, "openblas_set_num_threads");
    get_threads = (get_threads_fn)dlsym(handle, "openblas_get_num_threads");
    corename = (corename_fn)dlsym(handle, "openblas_get_corename");
    snprintf(library, sizeof library, "%s", name);
    napi_value out;
    CHECK(env, napi_create_string_utf8(env, library, NAPI_AUTO_LENGTH, &out));
    return out;
  }
  char message[1200];
  snprintf(message, sizeof message, "no CBLAS library could be opened: %s", tried);
  napi_throw_error(env, "TURNWISE_BLAS_MISSING", message);
  return NULL;
}

/*
 * sgemmBatch(a, b, c, batchA, batchB, batch, m, n, k, transA, transB): for i < batch,
 * c[i] = op(a[i % batchA]) x op(b[i % batchB]), row-major; a item [m, k] ([k, m] when
 * transposed), b item [k, n] ([n, k] when transposed), c item [m, n].
 */
static napi_value sgemm_batch(napi_env env, napi_callback_info info) {
  size_t argc = 11;
  napi_value argv[11];
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (sgemm == NULL) return throw_type(env, "sgemmBatch: call open() first");
  if (argc < 11) return throw_type(env, "sgemmBatch: expected 11 arguments (a, b, c, batchA, batchB, batch, m, n, k, transA, transB)");
  float *a, *b, *c;
  size_t la, lb, lc;
  if (!f32(env, argv[0], &a, &la)) return throw_type(env, "sgemmBatch: a must be a Float32Array");
  if (!f32(env, argv[1], &b, &lb)) return throw_type(env, "sgemmBatch: b must be a Float32Array");
  if (!f32(env, argv[2], &c, &lc)) return throw_type(env, "sgemmBatch: c must be a Float32Array");
  int64_t dims[6];
  for (int i = 0; i < 6; i++) {
    if (napi_get_value_int64(env, argv[3 + i], &dims[i]) != napi_ok || dims[i] < 1 || dims[i] > INT32_MAX) return throw_type(env, "sgemmBatch: batchA, batchB, batch, m, n, k must be positive integers");
  }
  bool transA = false, transB = false;
  CHECK(env, napi_get_value_bool(env, argv[9], &transA));
  CHECK(env, napi_get_value_bool(env, argv[10], &transB));
  int64_t batchA = dims[0], batchB = dims[1], batch = dims[2], m = dims[3], n = dims[4], k = dims[5];
  if ((size_t)(batchA * m * k) > la) return throw_type(env, "sgemmBatch: a is shorter than batchA * m * k");
  if ((size_t)(batchB * k * n) > lb) return throw_type(env, "sgemmBatch: b is shorter than batchB * k * n");
  if ((size_t)(batch * m * n) > lc) return throw_type(env, "sgemmBatch: c is shorter than batch * m * n");
  int lda = transA ? (int)m : (int)k;
  int ldb = transB ? (int)k : (int)n;
  if (m == 1 && sgemv != NULL) {
    /*
     * One row (a decode step at batch 1, attention of one query): a matrix-vector product. OpenBLAS's
     * sgemm is 2-4x slower than its sgemv there (measured: [1, 576] x [576, 1536] 0.28 vs 0.07 ms,
     * the tied LM head [1, 576] x [576, 49152]^T 17.4 vs 7.7 ms). A's row is contiguous either way.
     */
    for (int64_t i = 0; i < batch; i++) {
      const float *ai = a + (i % batchA) * k;
      const float *bi = b + (i % batchB) * k * n;
      if (transB) sgemv(ROW_MAJOR, NO_TRANS, (int)n, (int)k, 1.0f, bi, (int)k, ai, 1, 0.0f, c + i * n, 1);
      else sgemv(ROW_MAJOR, TRANS, (int)k, (int)n, 1.0f, bi, (int)n, ai, 1, 0.0f, c + i * n, 1);
    }
    return NULL;
  }
  if (batchB == 1 && !transA && batchA == batch) {
    /* One call: a's items stacked are one [batch * m, k] matrix. */
    sgemm(ROW_MAJOR, NO_TRANS, transB ? TRANS : NO_TRANS, (int)(batch * m), (int)n, (int)k, 1.0f, a, lda, b, ldb, 0.0f, c, (int)n);
    return NULL;
  }
  for (int64_t i = 0; i < batch; i++) {
    const float *ai = a + (i % batchA) * m * k;
    const float *bi = b + (i % batchB) * k * n;
    sgemm(ROW_MAJOR, transA ? TRANS : NO_TRANS, transB ? TRANS : NO_TRANS, (int)m, (int)n, (int)k, 1.0f, ai, lda, bi, ldb, 0.0f, c + i * m * n, (int)n);
  }
  return NULL;
}

int tw_matmul(int64_t m, int64_t n, int64_t k, const float *a, const float *b, int trans_b, float *c) {
  if (sgemm == NULL) return 0;
  if (m == 1 && sgemv != NULL) {
    if (trans_b) sgemv(ROW_MAJOR, NO_TRANS, (int)n, (int)k, 1.0f, b, (int)k, a, 1, 0.0f, c, 1);
    else sgemv(ROW_MAJOR, TRANS, (int)k, (int)n, 1.0f, b, (int)n, a, 1, 0.0f, c, 1);
    return 1;
  }
  sgemm(ROW_MAJOR, NO_TRANS, trans_b ? TRANS : NO_TRANS, (int)m, (int)n, (int)k, 1.0f, a, (int)k, b, trans_b ? (int)k : (int)n, 0.0f, c, (int)n);
  return 1;
}

int tw_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (sgemm == NULL) return 0;
  sgemm(ROW_MAJOR, trans_a ? TRANS : NO_TRANS, trans_b ? TRANS : NO_TRANS, (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
  return 1;
}

/* setThreads(n): BLAS threads (OpenBLAS only; others ignore it). */
static napi_value set_threads_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  int32_t n = 0;
  CHECK(env, napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  if (argc < 1 || napi_get_value_int32(env, argv[0], &n) != napi_ok || n < 1) return throw_type(env, "setThreads: expected a positive integer");
  if (set_threads != NULL) set_threads(n);
  return NULL;
}

/* threads(): BLAS threads now (1 when the library cannot tell). */
static napi_value threads_js(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  CHECK(env, napi_create_int32(env, get_threads != NULL ? get_threads() : 1, &out));
  return out;
}

/* kernels(): the BLAS kernel family in use (OpenBLAS's core name, e.g. "SkylakeX"), or "" when the library cannot tell. */
static napi_value kernels_js(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out;
  CHECK(env, napi_create_string_utf8(env, corename != NULL ? corename() : "", NAPI_AUTO_LENGTH, &out));
  return out;
}

/* native/log_softmax.c */
napi_value log_softmax_stats(napi_env env, napi_callback_info info);
napi_value log_softmax_stats_grad(napi_env env, napi_callback_info info);
/* native/adam.c */
napi_value adam_step_js(napi_env env, napi_callback_info info);
napi_value adam_step_host_js(napi_env env, napi_callback_info info);
/* native/greedy.c */
napi_value greedy_rows_js(napi_env env, napi_callback_info info);
/* native/packed.c */
napi_value strided_copy_js(napi_env env, napi_callback_info info);
napi_value rope_packed_js(napi_env env, napi_callback_info info);
/* native/sum_squares.c */
napi_value sum_squares_js(napi_env env, napi_callback_info info);
/* native/decode_attention.c */
napi_value decode_attention_js(napi_env env, napi_callback_info info);
/* native/decode_step.c */
napi_value decode_layer_js(napi_env env, napi_callback_info info);
napi_value decode_head_js(napi_env env, napi_callback_info info);
napi_value decode_scratch_js(napi_env env, napi_callback_info info);
napi_value decode_profile_js(napi_env env, napi_callback_info info);
/* native/fma_peak.c */
napi_value fma_peak_js(napi_env env, napi_callback_info info);
/* native/lora.c */
napi_value lora_forward_js(napi_env env, napi_callback_info info);
napi_value lora_adapter_grads_js(napi_env env, napi_callback_info info);
napi_value lora_input_grad_js(napi_env env, napi_callback_info info);
/* native/attention.c */
napi_value attention_forward_js(napi_env env, napi_callback_info info);
napi_value attention_backward_js(napi_env env, napi_callback_info info);
/* native/layers.c */
napi_value rms_norm_forward_js(napi_env env, napi_callback_info info);
napi_value rms_norm_backward_js(napi_env env, napi_callback_info info);
napi_value swiglu_forward_js(napi_env env, napi_callback_info info);
napi_value swiglu_backward_js(napi_env env, napi_callback_info info);
napi_value rope_js(napi_env env, napi_callback_info info);

NAPI_MODULE_INIT(/* napi_env env, napi_value exports */) {
  napi_property_descriptor props[] = {
      {"attentionBackward", NULL, attention_backward_js, NULL, NULL, NULL, napi_default, NULL},
      {"attentionForward", NULL, attention_forward_js, NULL, NULL, NULL, napi_default, NULL},
      {"adamStep", NULL, adam_step_js, NULL, NULL, NULL, napi_default, NULL},
      {"adamStepHost", NULL, adam_step_host_js, NULL, NULL, NULL, napi_default, NULL},
      {"decodeHead", NULL, decode_head_js, NULL, NULL, NULL, napi_default, NULL},
      {"decodeLayer", NULL, decode_layer_js, NULL, NULL, NULL, napi_default, NULL},
      {"decodeProfile", NULL, decode_profile_js, NULL, NULL, NULL, napi_default, NULL},
      {"decodeScratchFloats", NULL, decode_scratch_js, NULL, NULL, NULL, napi_default, NULL},
      {"decodeAttention", NULL, decode_attention_js, NULL, NULL, NULL, napi_default, NULL},
      {"fmaPeak", NULL, fma_peak_js, NULL, NULL, NULL, napi_default, NULL},
      {"greedyRows", NULL, greedy_rows_js, NULL, NULL, NULL, napi_default, NULL},
      {"kernels", NULL, kernels_js, NULL, NULL, NULL, napi_default, NULL},
      {"logSoftmaxStats", NULL, log_softmax_stats, NULL, NULL, NULL, napi_default, NULL},
      {"logSoftmaxStatsGrad", NULL, log_softmax_stats_grad, NULL, NULL, NULL, napi_default, NULL},
      {"loraAdapterGrads", NULL, lora_adapter_grads_js, NULL, NULL, NULL, napi_default, NULL},
      {"loraForward", NULL, lora_forward_js, NULL, NULL, NULL, napi_default, NULL},
      {"loraInputGrad", NULL, lora_input_grad_js, NULL, NULL, NULL, napi_default, NULL},
      {"open", NULL, open_blas, NULL, NULL, NULL, napi_default, NULL},
      {"rmsNormBackward", NULL, rms_norm_backward_js, NULL, NULL, NULL, napi_default, NULL},
      {"rmsNormForward", NULL, rms_norm_forward_js, NULL, NULL, NULL, napi_default, NULL},
      {"rope", NULL, rope_js, NULL, NULL, NULL, napi_default, NULL},
      {"ropePacked", NULL, rope_packed_js, NULL, NULL, NULL, napi_default, NULL},
      {"sgemmBatch", NULL, sgemm_batch, NULL, NULL, NULL, napi_default, NULL},
      {"setThreads", NULL, set_threads_js, NULL, NULL, NULL, napi_default, NULL},
      {"stridedCopy", NULL, strided_copy_js, NULL, NULL, NULL, napi_default, NULL},
      {"sumSquares", NULL, sum_squares_js, NULL, NULL, NULL, napi_default, NULL},
      {"swiGluBackward", NULL, swiglu_backward_js, NULL, NULL, NULL, napi_default, NULL},
      {"swiGluForward", NULL, swiglu_forward_js, NULL, NULL, NULL, napi_default, NULL},
      {"threads", NULL, threads_js, NULL, NULL, NULL, napi_default, NULL},
  };
  if (napi_define_properties(env, exports, sizeof props / sizeof props[0], props) != napi_ok) return NULL;
  return exports;
}
