/*
 * The core's float32 FMA peak, measured (issue #31): benchmarks state each figure as a fraction of
 * what one core can do at most, so the distance to the physical limit is on the page. A datasheet
 * figure would need the clock and the number of FMA units, which a VM does not tell reliably; a
 * loop of independent vector FMAs at the widest width the CPU has measures both at once.
 *
 * Independent accumulators hide the FMA latency (4-5 cycles) on two FMA pipes: sixteen with
 * AVX-512's 32 registers, twelve with AVX2's 16 (sixteen plus the two constants spill to the stack
 * there and measured half the peak: 58 against 102 GFLOP/s on an AVX2-only Zen 4 VM). Timed in the
 * calling thread's CPU time, so other processes on a shared machine do not lower the figure.
 */
#include <immintrin.h>
#include <node_api.h>
#include <stdint.h>
#include <time.h>

#include "napi_arrays.h"

#define ACCUMULATORS 16
#define ACCUMULATORS_256 12

static double thread_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Each call: iterations x ACCUMULATORS FMAs of `lanes` floats; returns a sum so nothing is optimised away. */
__attribute__((target("avx512f"))) static float fma_loop_512(int64_t iterations) {
  __m512 acc[ACCUMULATORS];
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (int j = 0; j < ACCUMULATORS; j++) acc[j] = _mm512_set1_ps((float)j);
  for (int64_t i = 0; i < iterations; i++) {
#pragma GCC unroll 16
    for (int j = 0; j < ACCUMULATORS; j++) acc[j] = _mm512_fmadd_ps(acc[j], a, b);
  }
  __m512 s = acc[0];
  for (int j = 1; j < ACCUMULATORS; j++) s = _mm512_add_ps(s, acc[j]);
  return _mm512_reduce_add_ps(s);
}

__attribute__((target("avx2,fma"))) static float fma_loop_256(int64_t iterations) {
  __m256 acc[ACCUMULATORS_256];
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (int j = 0; j < ACCUMULATORS_256; j++) acc[j] = _mm256_set1_ps((float)j);
  for (int64_t i = 0; i < iterations; i++) {
#pragma GCC unroll 16
    for (int j = 0; j < ACCUMULATORS_256; j++) acc[j] = _mm256_fmadd_ps(acc[j], a, b);
  }
  __m256 s = acc[0];
  for (int j = 1; j < ACCUMULATORS_256; j++) s = _mm256_add_ps(s, acc[j]);
  float out[8];
  _mm256_storeu_ps(out, s);
  return out[0] + out[1] + out[2] + out[3] + out[4] + out[5] + out[6] + out[7];
}

/* fmaPeak(seconds): { gflops, lanes, cpuSeconds } — float32 FLOP/s (an FMA counts 2) per CPU-second of this thread. */
napi_value fma_peak_js(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  double seconds = 0.2;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc >= 1 && (napi_get_value_double(env, argv[0], &seconds) != napi_ok || !(seconds > 0))) return throw_type(env, "fmaPeak: expected a positive number of seconds");
  __builtin_cpu_init();
  int lanes = __builtin_cpu_supports("avx512f") ? 16 : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 8 : 0;
  double best = 0, spent = 0;
  volatile float sink = 0;
  if (lanes > 0) {
    const int64_t iterations = 1 << 20;
    while (spent < seconds) {
      double start = thread_seconds();
      sink += lanes == 16 ? fma_loop_512(iterations) : fma_loop_256(iterations);
      double took = thread_seconds() - start;
      spent += took;
      double rate = (double)iterations * (lanes == 16 ? ACCUMULATORS : ACCUMULATORS_256) * lanes * 2 / took / 1e9;
      if (took > 0 && rate > best) best = rate;
    }
  }
  (void)sink;
  napi_value out, v;
  if (napi_create_object(env, &out) != napi_ok) return NULL;
  napi_create_double(env, best, &v);
  napi_set_named_property(env, out, "gflops", v);
  napi_create_int32(env, lanes, &v);
  napi_set_named_property(env, out, "lanes", v);
  napi_create_double(env, spent, &v);
  napi_set_named_property(env, out, "cpuSeconds", v);
  return out;
}
