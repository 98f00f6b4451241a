import { describe, expect, it } from 'vitest';
import { BackgroundEvaluation } from '../../src/runtime/train/background-eval.js';

describe('BackgroundEvaluation', () => {
  it('runs one evaluation at a time, in the order started, and settles after the last', async () => {
    const background = new BackgroundEvaluation();
    const log: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    background.start(0, async () => {
      log.push('0 start');
      await gate;
      log.push('0 end');
    });
    background.start(10, async () => {
      log.push('10 start');
    });
    await Promise.resolve();
    expect(log).toEqual(['0 start']); // the second waits for the first
    let settled = false;
    const waiting = background.settled().then(() => {
      settled = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(settled).toBe(false);
    release();
    await waiting;
    expect(log).toEqual(['0 start', '0 end', '10 start']);
    await expect(background.settled()).resolves.toBeUndefined(); // nothing in flight
  });

  it('reports a failed evaluation, naming its step, at every later gate', async () => {
    const background = new BackgroundEvaluation();
    background.start(20, async () => {
      throw new Error('env server gone');
    });
    await expect(background.settled()).rejects.toThrow('the evaluation after step 20 failed: env server gone');
    background.start(30, async () => {});
    await expect(background.settled()).rejects.toThrow(/after step 20/);
  });
});
