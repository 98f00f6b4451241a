/**
 * Task item ids as AgentGym writes them: `<env>_<index>` (e.g. `babyai_12`, `textcraft_3`).
 * The environment name may itself contain underscores (`lmrlgym_maze_4`): the index is the part
 * after the last underscore.
 */
import { InvalidArgumentError } from './errors.js';
import type { TaskId } from './types.js';

export interface ParsedTaskId {
  readonly env: string;
  readonly index: number;
}

/**
 * Splits a task id into environment name and integer index.
 * @example parseTaskId('babyai_12') // { env: 'babyai', index: 12 }
 */
export function parseTaskId(taskId: TaskId): ParsedTaskId {
  const cut = taskId.lastIndexOf('_');
  const env = taskId.slice(0, cut);
  const digits = taskId.slice(cut + 1);
  if (cut <= 0 || !/^\d+$/.test(digits)) {
    throw InvalidArgumentError.format('taskId', `expected "<env>_<index>" such as "babyai_12", got ${JSON.stringify(taskId)}`);
  }
  return { env, index: Number(digits) };
}

/** @example formatTaskId('babyai', 12) // 'babyai_12' */
export function formatTaskId(env: string, index: number): TaskId {
  if (!Number.isInteger(index) || index < 0) throw InvalidArgumentError.format('index', `expected a non-negative integer, got ${index}`);
  return `${env}_${index}`;
}
