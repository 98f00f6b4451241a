/* Argument helpers of the addon's functions (typed arrays, type errors), shared by the C files of native/. */
#ifndef TURNWISE_NAPI_ARRAYS_H
#define TURNWISE_NAPI_ARRAYS_H
#include <node_api.h>
#include <stddef.h>
#include <stdint.h>

/* The data and length of a typed array of `want` type; 0 when the value is anything else. */
static inline int typed_array(napi_env env, napi_value value, napi_typedarray_type want, void **data, size_t *length) {
  napi_typedarray_type type;
  void *raw = NULL;
  if (napi_get_typedarray_info(env, value, &type, length, &raw, NULL, NULL) != napi_ok || type != want) return 0;
  *data = raw;
  return 1;
}

/* Throws a TypeError with `message` (the addon's one error shape for bad arguments); returns NULL to return. */
static inline napi_value throw_type(napi_env env, const char *message) {
  napi_throw_type_error(env, "TURNWISE_NATIVE", message);
  return NULL;
}

static inline int f32(napi_env env, napi_value value, float **data, size_t *length) {
  return typed_array(env, value, napi_float32_array, (void **)data, length);
}

static inline int i32(napi_env env, napi_value value, int32_t **data, size_t *length) {
  return typed_array(env, value, napi_int32_array, (void **)data, length);
}

static inline int u8(napi_env env, napi_value value, uint8_t **data, size_t *length) {
  return typed_array(env, value, napi_uint8_array, (void **)data, length);
}

/* `count` positive integers into out; 0 when one is anything else. */
static inline int ints(napi_env env, napi_value *values, int count, int64_t *out) {
  for (int i = 0; i < count; i++) {
    if (napi_get_value_int64(env, values[i], &out[i]) != napi_ok || out[i] < 1) return 0;
  }
  return 1;
}

/* `count` Float32Arrays into out and lengths; 0 when one is anything else. */
static inline int floats(napi_env env, napi_value *values, int count, float **out, size_t *lengths) {
  for (int i = 0; i < count; i++) {
    if (!f32(env, values[i], &out[i], &lengths[i])) return 0;
  }
  return 1;
}

#endif
