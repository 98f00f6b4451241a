/**
 * A stored turn with one trained token and nothing else of note, for tests of logic that reads
 * only a turn's index, action text and invalid flag (reward shapers, alarms).
 */
import type { Turn } from '../../src/core/types.js';

/** Turn `index` that took `actionText` (one prompt token, one trained action token at log-prob -1, reward 0). */
export const plainTurn = (index: number, actionText: string, invalidAction = false): Turn => ({
  index,
  observationText: '',
  promptTokens: Int32Array.of(1),
  actionText,
  actionTokens: Int32Array.of(2),
  actionLogprobs: Float32Array.of(-1),
  actionLossMask: Uint8Array.of(1),
  constraint: null,
  policyVersion: 0,
  reward: 0,
  invalidAction,
});
