/**
 * A checkpoint as a plain Hugging Face model folder: `config.json` (with the token ids),
 * `model.safetensors` with every weight — a LoRA run's adapters merged into its base
 * (`W + alpha/r * B·A`) — and the tokenizer files with the chat template and generation config.
 * No optimizer or trainer state: what `transformers`, vLLM or `turnwise serve` / `model.from`
 * load as they load any model.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InvalidArgumentError } from '../core/errors.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { selectBackend } from '../models/backend/select.js';
import { loadCheckpoint, resolveCheckpointDir } from '../models/checkpoint.js';
import { writeSafetensors } from '../models/safetensors.js';
import { buildPolicyStack } from './policy-stack.js';
import { loadRunConfig } from './run-folder.js';

/** What {@link exportModelFolder} wrote. */
export interface ExportedModel {
  readonly checkpointDir: string;
  readonly out: string;
  readonly step: number;
  /** True when LoRA adapters were merged into the base. */
  readonly merged: boolean;
  readonly files: readonly string[];
}

/**
 * Writes the model of a run folder's latest checkpoint (or a checkpoint folder) to `out`, which
 * must not exist or be empty.
 * @example const { files } = await exportModelFolder('runs/babyai-llm-lora', 'exports/babyai-agent');
 */
export async function exportModelFolder(location: string, out: string): Promise<ExportedModel> {
  const present = await readdir(out).catch(() => [] as string[]);
  if (present.length > 0) throw InvalidArgumentError.format('out', `${out} is not empty; give a new folder`);
  const checkpointDir = await resolveCheckpointDir(location);
  const config = await loadRunConfig(dirname(dirname(checkpointDir)));
  const checkpoint = await loadCheckpoint(checkpointDir);
  await selectBackend(config.model.backend, { matmul: config.model.matmul });
  const stack = await buildPolicyStack(config, getEnvironmentSpec(config.env.name), checkpoint);
  try {
    const model = stack.learnerModel;
    const merged = model.lora !== null;
    await mkdir(out, { recursive: true });
    const files: string[] = [];
    const write = async (name: string, data: string) => {
      await writeFile(join(out, name), data);
      files.push(name);
    };
    await write('config.json', `${JSON.stringify(model.toHfConfig(stack.text.tokenIds), null, 2)}\n`);
    const records: Parameters<typeof writeSafetensors>[1] = {};
    for (const [name, w] of model.mergedNamedWeights()) records[name] = { dtype: 'F32', shape: w.shape, data: w.data };
    await writeSafetensors(join(out, 'model.safetensors'), records, { format: 'pt' });
    files.push('model.safetensors');
    for (const file of stack.text.files({ modelMaxLength: model.config.maxContext, maxNewTokens: config.sampling.maxActionTokens })) await write(file.name, file.data);
    return { checkpointDir, out, step: checkpoint.step, merged, files };
  } finally {
    await stack.close();
  }
}
