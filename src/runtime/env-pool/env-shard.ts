/**
 * The environment instances of one worker thread (a shard), addressed by slot. It applies a batch
 * of ops in order and answers each one; a throwing environment answers its own op with an error
 * (the env-session actor on the main thread then fails that session) and never the whole batch.
 */
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentSpec } from '../../envs/environment.js';
import { type EnvOp, type EnvReply, OP, STATUS } from './batch-codec.js';

function okStep(result: StepResult): EnvReply {
  return {
    status: STATUS.ok,
    text: result.observation.text,
    // Not copied: the reply is encoded right away and nothing mutates it.
    actions: result.observation.availableActions ?? null,
    reward: result.reward,
    done: result.done,
    success: result.success,
    infoJson: result.info === undefined ? '' : JSON.stringify(result.info),
    error: '',
  };
}

function failed(error: unknown): EnvReply {
  const message = error instanceof Error ? error.message : String(error);
  return { status: STATUS.error, text: '', actions: null, reward: 0, done: false, success: undefined, infoJson: '', error: message };
}

/** What a reset answers (and a close: an empty observation): no reward, not done. */
function resetResult(observation: Observation): StepResult {
  return { observation, reward: 0, done: false };
}

const CLOSED: StepResult = resetResult({ text: '' });

/**
 * Environment instances by slot, created on first use.
 * @example
 * const shard = new EnvShard(getEnvironmentSpec('babyai'), { levels: ['GoToRedBall'] });
 * const [reply] = await shard.apply([{ kind: OP.reset, slot: 0, taskIndex: 1, text: '' }]);
 */
export class EnvShard {
  private readonly envs = new Map<number, Environment>();

  constructor(
    private readonly spec: EnvironmentSpec,
    private readonly settings: Readonly<Record<string, unknown>>,
  ) {}

  /** Live environment instances. */
  get size(): number {
    return this.envs.size;
  }

  /** Applies `ops` in order (a slot's ops keep their order) and answers each as a reply to encode (worker threads). */
  async apply(ops: readonly EnvOp[]): Promise<EnvReply[]> {
    const replies: EnvReply[] = new Array(ops.length);
    for (let i = 0; i < ops.length; i++) {
      try {
        // Synchronous environments answer directly: no microtask per op.
        const result = this.answer(ops[i] as EnvOp);
        replies[i] = okStep(result instanceof Promise ? await result : result);
      } catch (error) {
        replies[i] = failed(error);
      }
    }
    return replies;
  }

  /**
   * One op on its slot's instance (created by the slot's first reset): the environment's own step
   * result, a reset's observation as `{ observation, reward: 0, done: false }`, or an empty one for
   * a close. Throws what the environment throws. Synchronous environments answer synchronously.
   */
  answer(op: EnvOp): StepResult | Promise<StepResult> {
    if (op.kind === OP.close) {
      const env = this.envs.get(op.slot);
      this.envs.delete(op.slot);
      return env === undefined ? CLOSED : Promise.resolve(env.close()).then(() => CLOSED);
    }
    let env = this.envs.get(op.slot);
    if (env === undefined) {
      if (op.kind !== OP.reset) throw new Error(`slot ${op.slot}: step before reset`);
      env = this.spec.create({ settings: this.settings });
      this.envs.set(op.slot, env);
    }
    if (op.kind === OP.reset) {
      const observation = env.reset(op.taskIndex);
      return observation instanceof Promise ? observation.then(resetResult) : resetResult(observation);
    }
    return env.step(op.text);
  }

  /** Closes every instance. */
  async closeAll(): Promise<void> {
    const envs = [...this.envs.values()];
    this.envs.clear();
    await Promise.allSettled(envs.map(async (env) => env.close()));
  }
}
