/**
 * The policy-loss plug-in point: a loss takes the per-token tensors of one micro-batch (new and
 * behaviour log-probs, advantages, mask, entropy, reference log-probs, aggregation weights) and
 * returns the terms the trainer minimises and logs. `ppo-clip` (PPO's clipped surrogate with the
 * KL and entropy terms, `losses.ts`) is the built-in, registered here like any user loss and named
 * by `algorithm.policyLoss`. The off-policy corrections (`offPolicy.correction`) keep their own loss.
 */
import type { z } from 'zod';
import type { tf } from '../backend/tf.js';
import { type PluginEntry, PluginRegistry } from '../core/plugin-registry.js';
import { type PolicyLossInput, type PolicyLossOptions, type PolicyLossTerms, ppoClipLoss } from './losses.js';

/** One registered policy loss. */
export interface PolicyLossEntry extends PluginEntry {
  /** Called inside the gradient tape: build the loss from the (differentiable) inputs. */
  loss(input: PolicyLossInput, options: PolicyLossOptions, settings: unknown): PolicyLossTerms<tf.Scalar>;
}

/** The registry (kind `policyLoss`, named by `algorithm.policyLoss`). */
export const policyLossRegistry = new PluginRegistry<PolicyLossEntry>('policyLoss', 'policy loss', 'algorithm.policyLoss');

policyLossRegistry.register({
  name: 'ppo-clip',
  description: 'PPO clipped surrogate (optionally dual-clipped) with the KL and entropy terms',
  builtIn: true,
  loss: (input, options) => ppoClipLoss(input, options),
});

/** A user policy loss: its settings typed by its own schema. */
export interface PolicyLossPlugin<S> {
  readonly name: string;
  readonly description: string;
  /** Schema of `algorithm.policyLossSettings`. */
  readonly settings?: z.ZodType<S>;
  /** Shapes: every input tensor [N] (one micro-batch's targets); returns scalars. */
  loss(input: PolicyLossInput, options: PolicyLossOptions, settings: S): PolicyLossTerms<tf.Scalar>;
}

/**
 * Registers a policy loss under `plugin.name` (select it with `algorithm.policyLoss`). It runs in
 * the learner thread, so a config with `train.dataParallel` > 1 cannot use it.
 * @example
 * registerPolicyLoss({ name: 'vanilla-pg', description: '−A·log π', loss: (i, o) => { const terms = ppoClipLoss(i, { ...o, clipRatio: 1e9 }); return terms; } });
 */
export function registerPolicyLoss<S = Record<string, never>>(plugin: PolicyLossPlugin<S>): void {
  policyLossRegistry.register({
    name: plugin.name,
    description: plugin.description,
    ...(plugin.settings !== undefined ? { settings: plugin.settings } : {}),
    loss: (input, options, settings) => plugin.loss(input, options, settings as S),
  });
}
