/**
 * The environment instances of one worker thread (a shard), addressed by slot. It applies a batch
 * of ops in order and answers each one; a throwing environment answers its own op with an error
 * (the env-session actor on the main thread then fails that session) and never the whole batch.
 */
import type { Observation, StepResult } from '../../core/types.js';
import type { Environment, EnvironmentSpec } from '../../envs/environment.js';
import { type EnvOp, type EnvReply, OP, STATUS } from './batch-codec.js';

function okObservation(observation: Observation): EnvReply {
  return {
    status: STATUS.ok,
    text: observation.text,
    // Not copied: the reply is encoded right away and nothing mutates it.
    actions: observation.availableActions ?? null,
    reward: 0,
    done: false,
    success: undefined,
    infoJson: '',
    error: '',
  };
}

function okStep(result: StepResult): EnvReply {
  return {
    ...okObservation(result.observation),
    reward: result.reward,
    done: result.done,
    success: result.success,
    infoJson: result.info === undefined ? '' : JSON.stringify(result.info),
  };
}

function failed(error: unknown): EnvReply {
  const message = error instanceof Error ? error.message : String(error);
  return { status: STATUS.error, text: '', actions: null, reward: 0, done: false, success: undefined, infoJson: '', error: message };
}

const closedReply: EnvReply = { status: STATUS.ok, text: '', actions: null, reward: 0, done: false, success: undefined, infoJson: '', error: '' };

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

  /** Applies `ops` in order (a slot's ops keep their order) and answers each. */
  async apply(ops: readonly EnvOp[]): Promise<EnvReply[]> {
    const replies: EnvReply[] = new Array(ops.length);
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i] as EnvOp;
      try {
        // Synchronous environments answer directly: no microtask per op.
        const reply = this.applyOne(op);
        replies[i] = reply instanceof Promise ? await reply : reply;
      } catch (error) {
        replies[i] = failed(error);
      }
    }
    return replies;
  }

  private applyOne(op: EnvOp): EnvReply | Promise<EnvReply> {
    if (op.kind === OP.close) {
      const env = this.envs.get(op.slot);
      this.envs.delete(op.slot);
      return env === undefined ? closedReply : Promise.resolve(env.close()).then(() => closedReply);
    }
    let env = this.envs.get(op.slot);
    if (env === undefined) {
      if (op.kind !== OP.reset) throw new Error(`slot ${op.slot}: step before reset`);
      env = this.spec.create({ settings: this.settings });
      this.envs.set(op.slot, env);
    }
    // Environments may answer synchronously; only await a real promise (saves a microtask per op).
    if (op.kind === OP.reset) {
      const observation = env.reset(op.taskIndex);
      return observation instanceof Promise ? observation.then(okObservation) : okObservation(observation);
    }
    const result = env.step(op.text);
    return result instanceof Promise ? result.then(okStep) : okStep(result);
  }

  /** Closes every instance. */
  async closeAll(): Promise<void> {
    const envs = [...this.envs.values()];
    this.envs.clear();
    await Promise.allSettled(envs.map(async (env) => env.close()));
  }
}
