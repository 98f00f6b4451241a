import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evalPlans } from '../../src/eval/harness.js';
import { checkpointSpec, loadPolicyFile, parseRemoteFlag, uniqueNames } from '../../src/runtime/policy-spec.js';

const dir = mkdtempSync(join(tmpdir(), 'turnwise-policy-spec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('policy specs (--remote, --policy, --policies file)', () => {
  it('parses --remote name=baseURL,key=value… into a remote policy', () => {
    const spec = parseRemoteFlag('qwen=http://localhost:8000/v1,model=Qwen2.5-7B-Instruct,key-env=VLLM_KEY,temperature=0.7,top-p=0.9,max-tokens=256,concurrency=2,max-retries=3,seed=false');
    expect(spec).toEqual({
      kind: 'remote',
      name: 'qwen',
      config: {
        name: 'qwen',
        baseURL: 'http://localhost:8000/v1',
        model: 'Qwen2.5-7B-Instruct',
        keyEnv: 'VLLM_KEY',
        temperature: 0.7,
        topP: 0.9,
        maxTokens: 256,
        concurrency: 2,
        sendSeed: false,
        timeoutMs: 120_000,
        retry: { maxRetries: 3 },
      },
    });
  });

  it('names the field at fault in a bad --remote', () => {
    expect(() => parseRemoteFlag('qwen=localhost:8000,model=m')).toThrow(/baseURL.*http/);
    expect(() => parseRemoteFlag('qwen=http://h/v1')).toThrow(/'model'.*missing/);
    expect(() => parseRemoteFlag('qwen=http://h/v1,model=m,temprature=1')).toThrow(/--remote qwen.*temprature/);
    expect(() => parseRemoteFlag('qwen=http://h/v1,model=m,temperature=9')).toThrow(/temperature/);
    expect(() => parseRemoteFlag('http://h/v1')).toThrow(/<name>=<baseURL>/);
  });

  it('reads a YAML policy file with checkpoints and remote models, and rejects unknown keys', () => {
    const good = join(dir, 'good.yaml');
    writeFileSync(good, ['policies:', '  - { name: trained, checkpoint: runs/babyai-grpo, greedy: true }', '  - { name: gpt, baseURL: https://api.openai.com/v1, model: gpt-4o, keyEnv: OPENAI_API_KEY }'].join('\n'));
    const specs = loadPolicyFile(good);
    expect(specs[0]).toEqual({ kind: 'checkpoint', name: 'trained', location: 'runs/babyai-grpo', greedy: true });
    expect(specs[1]).toMatchObject({ kind: 'remote', name: 'gpt', config: { model: 'gpt-4o', keyEnv: 'OPENAI_API_KEY', concurrency: 4 } });
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'policies:\n  - { name: gpt, baseURL: https://x/v1, model: m, apiKey: sk-secret }\n');
    expect(() => loadPolicyFile(bad)).toThrow(/policies\[0\]/);
  });

  it('defaults a checkpoint name to the folder name and rejects duplicate names', () => {
    expect(checkpointSpec('runs/babyai-grpo/').name).toBe('babyai-grpo');
    expect(() => uniqueNames([checkpointSpec('a/x'), checkpointSpec('b/x')])).toThrow(/two policies are named 'x'/);
  });

  it('gives every policy the same episodes: n seeded samples per item, stable in the seed', () => {
    const plans = evalPlans('babyai', [3, 7], 'test', 2, 1);
    expect(plans.map((p) => [p.taskId, p.groupId, p.trajectoryId])).toEqual([
      ['babyai_3', 'test/0', 'test/0/s0'],
      ['babyai_3', 'test/0', 'test/0/s1'],
      ['babyai_7', 'test/1', 'test/1/s0'],
      ['babyai_7', 'test/1', 'test/1/s1'],
    ]);
    expect(new Set(plans.map((p) => p.seed)).size).toBe(4);
    expect(evalPlans('babyai', [3, 7], 'test', 2, 1)).toEqual(plans);
    expect(evalPlans('babyai', [3, 7], 'test', 2, 2)[0]?.seed).not.toBe(plans[0]?.seed);
  });
});
