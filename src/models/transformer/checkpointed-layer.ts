/**
 * Activation checkpointing of one decoder layer (Chen et al. 2016, arXiv:1604.06174; what
 * `gradient_checkpointing_enable()` does in transformers): the forward keeps only the layer's
 * input, and the backward runs the layer again under its own gradient tape to get the input's and
 * the layer's trainable variables' gradients.
 *
 * Why: tfjs keeps every tensor a kernel saves for the backward pass until the whole backward pass
 * ends, and every gradient it computes on the way too (tape.ts never frees a node's `dy` after
 * use). At the SmolLM2-135M shape with LoRA that was about 62k floats per token per layer (112k
 * with LoRA dropout): a 512-token micro-batch needed more than the wasm heap's 4 GiB. With a
 * checkpoint per layer the backward holds one `[tokens, d]` input per layer plus a single layer's
 * tape, for the price of one more forward pass of the decoder (about a third more compute).
 *
 * The layer function must be deterministic (LoRA dropout draws its masks from a seed per layer),
 * and it must read the tensors it is given in `context` rather than captured ones: those captured
 * tensors are freed when the forward's scope ends, before the backward pass runs.
 */
import { tf } from '../../backend/tf.js';

/** The engine internals used here (tfjs-core 4.22: `Engine.gradients` and the active tape). */
interface TapeEngine {
  gradients(f: () => tf.Tensor, xs: tf.Tensor[], dy?: tf.Tensor, allowNoGradients?: boolean): { value: tf.Tensor; grads: (tf.Tensor | undefined)[] };
  readonly state: { activeTape: unknown };
}

/**
 * Runs `layer(x, context)` with its activations checkpointed (module comment). `variables` are the
 * trainable variables the layer reads (they receive gradients); frozen weights may be captured.
 * Shape: x `[n, d]` -> `[n, d]`.
 * @example
 * x = checkpointedLayer(x, [cos, sin, mask], model.layerVariables(i), (h, [c, s, m]) => block(i, h, c, s, m));
 */
export function checkpointedLayer(
  x: tf.Tensor2D,
  context: readonly tf.Tensor[],
  variables: readonly tf.Variable[],
  layer: (x: tf.Tensor2D, context: readonly tf.Tensor[]) => tf.Tensor2D,
): tf.Tensor2D {
  const op = tf.customGrad((...args: (tf.Tensor | tf.GradSaveFunc)[]) => {
    const save = args[args.length - 1] as tf.GradSaveFunc;
    const input = args[0] as tf.Tensor2D;
    save([input, ...context]);
    return {
      value: layer(input, context),
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
        const [savedInput, ...savedContext] = saved as [tf.Tensor2D, ...tf.Tensor[]];
        const engine = tf.engine() as unknown as TapeEngine;
        // The nested tape replaces the outer one while it runs and clears it when done; the outer
        // backward pass still needs its own to free its saved tensors at the end.
        const outer = engine.state.activeTape;
        try {
          return tf.tidy(() => {
            const xs = [savedInput, ...variables];
            const { grads } = engine.gradients(() => layer(savedInput, savedContext), xs, dy, true);
            return xs.map((t, i) => grads[i] ?? tf.zerosLike(t));
          });
        } finally {
          engine.state.activeTape = outer;
        }
      },
    };
  });
  return op(x, ...variables) as tf.Tensor2D;
}
