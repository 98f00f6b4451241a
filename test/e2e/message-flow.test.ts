/**
 * `messageFlow` (src/runtime/wiring/message-flow.ts, which the architecture figure is drawn from) against what a
 * real run sends: a one-step `trainRun` (with its step-0 and step-1 evaluations) on the in-process
 * bus, every message recorded with its subject and its sender.
 *
 * Recording: `publish` and `request` of `MemoryBus` are wrapped for the run. Subscribing to the bus
 * could not do it: on the memory bus, as on NATS, a request goes to every matching subscriber and
 * the first reply wins, so a wildcard listener would answer the episodes' requests itself — and a
 * subscriber never learns who sent a message. The sender is read from the call stack: the actor
 * whose effect sent it (the nearest frame in `src/actors/<name>.ts`), else the runtime part that did
 * (`src/runtime/rollout.ts`, the episode runner).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { MemoryBus } from '../../src/bus/memory-bus.js';
import { trainRun } from '../../src/runtime/train/train-run.js';
import { messageFlow, subjects } from '../../src/runtime/wiring/message-flow.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-flow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RUN = 'flowrun';
/** Runtime files that send on the bus themselves, by the role `messageFlow` gives them. */
const RUNTIME_SENDERS: Readonly<Record<string, string>> = { 'src/runtime/rollout.ts': 'episode runner' };

/** The `subjects` key a concrete subject of run `RUN` was made by (session ids may be anything). */
function subjectKey(subject: string): string {
  for (const [key, make] of Object.entries(subjects)) {
    const pattern = (make as (runId: string, sessionId: string) => string)(RUN, 'SESSION').replaceAll('.', '\\.').replace('SESSION', '[^.]+');
    if (new RegExp(`^${pattern}$`).test(subject)) return key;
  }
  return `unknown subject ${subject}`;
}

/** Who sent a message, from the stack of the `publish` / `request` call. */
function senderOf(stack: string): string {
  const actor = /src\/actors\/([\w-]+)\.ts/.exec(stack);
  if (actor) return actor[1] as string;
  for (const [file, role] of Object.entries(RUNTIME_SENDERS)) if (stack.includes(file)) return role;
  return `unknown sender:\n${stack}`;
}

describe('messageFlow', () => {
  it('lists exactly the (sender, subject) pairs a one-step run sends on its bus, each with its kind', async () => {
    const sent = new Map<string, 'publish' | 'request'>();
    const record = (kind: 'publish' | 'request', subject: string) => {
      sent.set(`${senderOf(new Error().stack ?? '')} → ${subjectKey(subject)}`, kind);
    };
    const publish = MemoryBus.prototype.publish;
    const request = MemoryBus.prototype.request;
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 100; // the sender's frame sits below xstate's
    vi.spyOn(MemoryBus.prototype, 'publish').mockImplementation(function (this: MemoryBus, subject, payload) {
      record('publish', subject);
      return publish.call(this, subject, payload);
    });
    vi.spyOn(MemoryBus.prototype, 'request').mockImplementation(function (this: MemoryBus, subject, payload, options) {
      record('request', subject);
      return request.call(this, subject, payload, options);
    });
    try {
      const config = resolveConfig(
        parseConfig({
          seed: 5,
          run: { dir, name: 'flow' },
          env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
          tokenizer: { vocabSize: 320, corpusEpisodes: 100 },
          model: { dModel: 32, nLayers: 1, nHeads: 2, ffnHidden: 64, maxContext: 192 },
          algorithm: { tasksPerStep: 2, groupSize: 2 },
          horizon: { schedule: 'fixed', horizon: 3 },
          train: { steps: 1, evalEvery: 1, evalTasks: 4, checkpointEvery: 1 },
          runtime: { inferenceWorkers: 0 },
        }),
      );
      const result = await trainRun({ config, runDir: join(dir, 'flow'), runId: RUN });
      expect(result.status).toBe('finished');
    } finally {
      vi.restoreAllMocks();
      Error.stackTraceLimit = limit;
    }
    const listed = messageFlow.filter((f) => f.subject !== null && f.runs === 'every run');
    expect([...sent.keys()].sort()).toEqual(listed.map((f) => `${f.from} → ${f.subject}`).sort());
    for (const f of listed) expect(sent.get(`${f.from} → ${f.subject}`), `${f.from} → ${f.subject}`).toBe(f.kind);
  });
});
