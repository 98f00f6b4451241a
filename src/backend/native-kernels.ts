/**
 * One switch for the native kernels beyond the matrix products (issue #20): Adam, RMSNorm, the
 * SwiGLU gate, RoPE and the masked softmax. On by default wherever the native matmul path is on;
 * off, those layers run their tfjs forms while matmuls stay native — how the bench tells the
 * kernels' share apart, and a way to rule them out when chasing a numerical difference.
 */
let enabled = true;

/**
 * Turns the native non-matmul kernels on or off (they also need the native matmul path active).
 * @example setNativeKernelsEnabled(false); // ... setNativeKernelsEnabled(true);
 */
export function setNativeKernelsEnabled(on: boolean): void {
  enabled = on;
}

/**
 * Whether the native non-matmul kernels are wanted.
 * @example if (nativeKernelsEnabled()) { ... }
 */
export function nativeKernelsEnabled(): boolean {
  return enabled;
}
