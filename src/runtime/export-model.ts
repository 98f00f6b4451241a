/**
 * A checkpoint as a plain Hugging Face model folder: `config.json` (with the token ids),
 * `model.safetensors` with every weight — a LoRA run's adapters merged into its base
 * (`W + alpha/r * B·A`) — and the tokenizer files with the chat template and generation config.
 * No optimizer or trainer state: what `transformers`, vLLM or `turnwise serve` / `model.from`
 * load as they load any model.
 *
 * A pretrained run's folder keeps its base's context and dtype: `max_position_embeddings` is the
 * base model's (the run's `model.maxContext` only capped training; vLLM would cap the model
 * there), and a BF16 (F16) base gives BF16 (F16) weights and `torch_dtype`, rounded to nearest
 * even as PyTorch casts — not float32 at twice the size.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { InvalidArgumentError } from '../core/errors.js';
import { getEnvironmentSpec } from '../envs/registry.js';
import { selectBackend } from '../backend/select.js';
import { loadCheckpoint, resolveCheckpointDir } from '../models/checkpoint.js';
import { Rng } from '../core/rng.js';
import { writeHfConfig } from '../models/hf/hf-config.js';
import { type HfModelInfo, inspectHfModel } from '../models/hf/hf-model.js';
import { toBfloat16, toFloat16, writeSafetensors } from '../models/safetensors.js';
import { buildPolicyStack } from './policy-stack.js';
import { openPretrainedModels } from './pretrained-stack.js';
import { loadRunConfig } from './run-folder.js';

/** What {@link exportModelFolder} wrote. */
export interface ExportedModel {
  readonly checkpointDir: string;
  readonly out: string;
  readonly step: number;
  /** True when LoRA adapters were merged into the base. */
  readonly merged: boolean;
  readonly files: readonly string[];
  /** How the weights were stored: a pretrained run's base dtype, else F32. */
  readonly dtype: 'F32' | 'BF16' | 'F16';
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
  // Only the learner's weights are needed: a pretrained run's models are opened without samplers.
  const base = config.model.from === null ? null : await inspectHfModel(config.model.from);
  const opened =
    base === null
      ? await buildPolicyStack(config, getEnvironmentSpec(config.env.name), checkpoint).then((stack) => ({ model: stack.learnerModel, text: stack.text, close: () => stack.close() }))
      : await openPretrainedModels(config, checkpoint, Rng.fromSeed(config.seed)).then((models) => ({
          model: models.learner,
          text: models.text,
          close: async () => {
            models.sampler.dispose();
            for (const m of models.owned) m.dispose();
            models.learner.dispose();
          },
        }));
  try {
    const { model, text } = opened;
    const merged = model.lora !== null;
    await mkdir(out, { recursive: true });
    const files: string[] = [];
    const write = async (name: string, data: string) => {
      await writeFile(join(out, name), data);
      files.push(name);
    };
    const dtype = base === null ? 'F32' : storedDtypeOf(base);
    const maxContext = base?.config.maxContext ?? model.config.maxContext;
    const hfConfig = { ...writeHfConfig({ ...model.config, maxContext }, text.tokenIds), torch_dtype: TORCH_DTYPES[dtype] };
    await write('config.json', `${JSON.stringify(hfConfig, null, 2)}\n`);
    const records: Parameters<typeof writeSafetensors>[1] = {};
    for (const [name, w] of model.mergedNamedWeights()) {
      records[name] = dtype === 'F32' ? { dtype, shape: w.shape, data: w.data } : { dtype, shape: w.shape, data: dtype === 'BF16' ? toBfloat16(w.data) : toFloat16(w.data) };
    }
    await writeSafetensors(join(out, 'model.safetensors'), records, { format: 'pt' });
    files.push('model.safetensors');
    for (const file of text.files({ modelMaxLength: maxContext, maxNewTokens: config.sampling.maxActionTokens })) await write(file.name, file.data);
    return { checkpointDir, out, step: checkpoint.step, merged, files, dtype };
  } finally {
    await opened.close();
  }
}

/** `torch_dtype` of each stored dtype. */
const TORCH_DTYPES = { F32: 'float32', BF16: 'bfloat16', F16: 'float16' } as const;

/** The dtype a base model's weights are stored in (BF16 or F16 when every tensor is; else F32). */
function storedDtypeOf(info: HfModelInfo): keyof typeof TORCH_DTYPES {
  const dtypes = new Set(info.weights.dtypes.values());
  if (dtypes.size === 1 && dtypes.has('BF16')) return 'BF16';
  if (dtypes.size === 1 && dtypes.has('F16')) return 'F16';
  return 'F32';
}
