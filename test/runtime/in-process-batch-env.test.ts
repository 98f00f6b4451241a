import { describe, expect, it } from 'vitest';
import type { StepResult } from '../../src/core/types.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { type EnvOp, OP } from '../../src/runtime/env-pool/batch-codec.js';
import { InProcessBatchEnv } from '../../src/runtime/env-pool/batch-env.js';

const settings = { levels: ['GoToRedBallGrey'] };
const spec = getEnvironmentSpec('babyai');
const indices = spec.catalog({ settings }).indices('train');
const SLOTS = 96;
const resets: EnvOp[] = Array.from({ length: SLOTS }, (_, slot) => ({ kind: OP.reset, slot, taskIndex: indices[slot] as number, text: '' }));
const steps: EnvOp[] = Array.from({ length: SLOTS }, (_, slot) => ({ kind: OP.step, slot, taskIndex: 0, text: slot % 2 === 0 ? 'turn left' : 'move forward' }));

const texts = (answers: readonly unknown[]) => answers.map((a) => (a instanceof Error ? `error: ${a.message}` : (a as StepResult).observation.text));

describe('InProcessBatchEnv', () => {
  it('yields to the event loop inside a long batch and answers exactly what one unbroken run answers', async () => {
    const whole = new InProcessBatchEnv(spec, settings, Number.POSITIVE_INFINITY);
    const sliced = new InProcessBatchEnv(spec, settings, 0);
    let turnsSeen = 0;
    const tick = setInterval(() => turnsSeen++, 0);
    const wholeAnswers = [...(await whole.run(0, resets)), ...(await whole.run(0, steps))];
    const before = turnsSeen;
    const slicedAnswers = [...(await sliced.run(0, resets)), ...(await sliced.run(0, steps))];
    clearInterval(tick);
    // A slice of 0 ms yields every 16 ops: the timer ran while the batches were in progress.
    expect(turnsSeen).toBeGreaterThan(before);
    expect(texts(slicedAnswers)).toEqual(texts(wholeAnswers));
    expect(texts(slicedAnswers).some((t) => t.startsWith('error'))).toBe(false);
  });

  it('runs batches given back to back one after another, so a slot’s step follows its reset', async () => {
    const env = new InProcessBatchEnv(spec, settings, 0);
    const direct = spec.create({ settings });
    // Not awaited in between: the second batch is handed over while the first is still yielding.
    // It steps the slots last to first, so run side by side it would step slots not yet reset.
    const backwards = [...steps].reverse();
    const [first, second] = await Promise.all([env.run(0, resets), env.run(0, backwards)]);
    expect(texts(first as readonly unknown[])[5]).toBe((direct.reset(indices[5] as number) as { text: string }).text);
    expect(texts(second as readonly unknown[])[SLOTS - 1 - 5]).toBe((direct.step('move forward') as StepResult).observation.text);
    expect(texts(second as readonly unknown[]).some((t) => t.startsWith('error'))).toBe(false);
    await env.close();
  });
});
