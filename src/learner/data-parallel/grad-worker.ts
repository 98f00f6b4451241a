/**
 * A gradient worker (piscina worker thread): its own tfjs backend (wasm has no threads in Node, so
 * parallelism comes from one backend per thread) and a replica of the policy (and critic). Per
 * task it reloads the weights from the shared buffer when their version changed, computes the
 * gradient of one micro-batch with the same code as the single-process trainer
 * (`accumulateGradients`), and writes it into the reply slot the task names.
 */
import { workerData } from 'piscina';
import { Rng } from '../../core/rng.js';
import { selectBackend } from '../../backend/select.js';
import { nativeMatmul } from '../../backend/native.js';
import { copyFloatsInto } from '../../backend/read-into.js';
import { tf } from '../../backend/tf.js';
import { Critic } from '../critic.js';
import { accumulateGradients, STATS } from '../grad-accumulate.js';
import { TransformerModel } from '../../models/transformer/model.js';
import { type GradientTask, type GradientWorkerData, replyLength } from './protocol.js';

const data = workerData as GradientWorkerData;

/** The replica, built on the first task. (No top-level await: piscina then loads this module through require, which tsx serves in dev.) */
interface Replica {
  readonly policy: TransformerModel;
  readonly critic: Critic | null;
  readonly variables: tf.Variable[];
  readonly policyVariables: number;
  loadedVersion: number;
}
let replica: Promise<Replica> | null = null;

async function buildReplica(): Promise<Replica> {
  await selectBackend(data.backend, { matmul: data.matmul });
  // One BLAS thread per worker: the workers are the parallelism (see GradientWorkerData.matmul).
  nativeMatmul()?.setThreads(1);
  // Initial values are irrelevant (overwritten from the shared buffer before the first task).
  const policy = new TransformerModel(data.spec.policy, Rng.fromSeed(0));
  const c = data.spec.critic;
  const critic =
    c === null
      ? null
      : c.trunk === 'shared'
        ? new Critic({ trunk: 'shared', dModel: c.dModel })
        : new Critic({ trunk: 'separate', dModel: c.dModel, model: new TransformerModel(c.model, Rng.fromSeed(0)) });
  const variables = [...policy.trainableVariables(), ...(critic?.trainableVariables() ?? [])];
  if (variables.length !== data.sizes.length || variables.some((v, i) => v.size !== data.sizes[i])) {
    throw new Error(`gradient worker: replica variables [${variables.map((v) => v.size)}] do not match the learner's [${data.sizes}]`);
  }
  return { policy, critic, variables, policyVariables: policy.trainableVariables().length, loadedVersion: -1 };
}

/** Copies the shared weights into the replica's variables. */
function loadWeights(variables: readonly tf.Variable[]): void {
  const shared = new Float32Array(data.weights);
  let offset = 0;
  for (const v of variables) {
    const values = tf.tensor(shared.subarray(offset, offset + v.size), v.shape, 'float32');
    v.assign(values);
    values.dispose();
    offset += v.size;
  }
}

/**
 * Piscina task: the gradients and loss statistics of one micro-batch, written into the task's reply
 * slot (shared with the main thread, reply-ring.ts); returns how many floats it wrote.
 * @example const floats = await pool.run({ weightsVersion: 3, micro, proximal: null, options, reply: slot });
 */
export default async function gradientTask(task: GradientTask): Promise<number> {
  replica ??= buildReplica();
  const r = await replica;
  const { policy, critic, variables, policyVariables } = r;
  if (task.weightsVersion !== r.loadedVersion) {
    loadWeights(variables);
    r.loadedVersion = task.weightsVersion;
  }
  const proximal = task.proximal ?? undefined;
  const { actorGrads, criticGrads, stats } = accumulateGradients({ policy, critic }, [task.micro], task.options, () => proximal);
  const length = replyLength(data.sizes, policyVariables, task.options.warmingUp, STATS.length);
  const reply = new Float32Array(task.reply, 0, length);
  let offset = 0;
  for (const g of [...actorGrads, ...criticGrads]) {
    copyFloatsInto(g, reply.subarray(offset, offset + g.size)); // no `dataSync` copy per gradient on wasm
    offset += g.size;
  }
  tf.dispose([...actorGrads, ...criticGrads]);
  reply.set(stats, offset);
  return length;
}
