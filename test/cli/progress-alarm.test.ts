import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TrainProgress } from '../../src/cli/progress.js';

describe('the CLI progress line', () => {
  it('prints a collapse alarm with its numbers and what the run does about it', () => {
    const out = new PassThrough() as unknown as NodeJS.WriteStream; // not a TTY: plain lines
    let text = '';
    (out as unknown as PassThrough).on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    const progress = new TrainProgress(10, out);
    progress.handle({ type: 'alarm', step: 7, name: 'entropyCollapse', message: 'entropy collapse: rollout/tokenEntropy 0.067 nats (3-step mean) < 0.160', action: 'stop', consequence: 'stopping the run after this step (checkpointed)' });
    progress.stop();
    expect(text).toMatch(/^⚠ alarm at step 7 \(\d+m\d\ds\): entropy collapse: rollout\/tokenEntropy 0\.067 nats \(3-step mean\) < 0\.160 — stopping the run after this step \(checkpointed\)\n$/);
  });
});
