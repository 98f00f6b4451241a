/**
 * A Hugging Face causal-LM folder as a turnwise model: `config.json` (read strictly, see
 * hf-config.ts) and its safetensors weights, with a one-line description of what was loaded.
 * The tokenizer side of the folder (tokenizer.json, chat template, generation config) is read by
 * src/models/chat/.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CheckpointError } from '../../core/errors.js';
import { nonRegularKind } from '../../core/file-kind.js';
import { TransformerModel } from '../transformer/model.js';
import { headDim, kvHeads } from '../transformer/config.js';
import { type ParsedHfConfig, parseHfConfig } from './hf-config.js';
import { readHfWeights, type WeightFiles, weightFiles } from './hf-weights.js';
import { checkShapeFitsFiles, parameterCountOf } from './shape-check.js';

/** What a folder holds, known before its weights are read. */
export interface HfModelInfo extends ParsedHfConfig {
  readonly folder: string;
  readonly weights: WeightFiles;
  /** Parameters of the model as turnwise builds it (a tied head counted once). */
  readonly parameters: number;
}

/**
 * Reads `config.json` and the weight headers (no tensor data).
 * @example const info = await inspectHfModel('models/SmolLM2-135M-Instruct'); describeHfModel(info)
 */
export async function inspectHfModel(folder: string): Promise<HfModelInfo> {
  const path = join(folder, 'config.json');
  let raw: unknown;
  const kind = await nonRegularKind(path);
  if (typeof kind === 'string') throw new CheckpointError(path, `is ${kind}, not a regular file`);
  try {
    raw = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new CheckpointError(path, `cannot read a Hugging Face config.json: ${(err as Error).message}`, { cause: err });
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new CheckpointError(path, 'expected a JSON object');
  const parsed = parseHfConfig(raw as Record<string, unknown>, path);
  const weights = await weightFiles(folder);
  // From the numbers alone, before anything per layer is built (an absurd layer count costs nothing).
  checkShapeFitsFiles(parsed.config, weights.bytes, path);
  const parameters = parameterCountOf(parsed.config);
  return { ...parsed, folder, weights, parameters };
}

/**
 * One line for the CLI: architecture, shape, parameters, stored dtype and the float32 size.
 * @example describeHfModel(info) // 'llama 30 layers d576 9/3 heads, 134.5M parameters, bfloat16 on disk -> 513 MiB float32'
 */
export function describeHfModel(info: HfModelInfo): string {
  const c = info.config;
  const dtypes = [...new Set(info.weights.dtypes.values())].sort().join('+');
  const heads = kvHeads(c) === c.nHeads ? `${c.nHeads} heads` : `${c.nHeads}/${kvHeads(c)} heads`;
  const extras = [
    headDim(c) * c.nHeads !== c.dModel ? `head_dim ${headDim(c)}` : '',
    c.qkvBias ? 'qkv bias' : '',
    c.qkNorm ? 'q/k-norm' : '',
    c.tieEmbeddings ? 'tied' : '',
    c.ropeScaling ? `rope ${c.ropeScaling.type} x${c.ropeScaling.factor}` : '',
  ].filter((s) => s !== '');
  const mib = Math.round((info.parameters * 4) / 2 ** 20);
  return `${c.architecture} ${c.nLayers} layers d${c.dModel} ${heads}${extras.length ? ` (${extras.join(', ')})` : ''}, vocab ${c.vocabSize}, ${formatCount(info.parameters)} parameters, ${dtypes || 'no'} weights on disk -> ${mib} MiB as float32`;
}

/**
 * Builds the model with the folder's weights.
 * @example const model = await loadHfModel('models/SmolLM2-135M-Instruct');
 */
export async function loadHfModel(folder: string, info?: HfModelInfo): Promise<TransformerModel> {
  const known = info ?? (await inspectHfModel(folder));
  return TransformerModel.fromNamedWeights(known.config, await readHfWeights(folder));
}

function formatCount(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(1)}k`;
  return String(n);
}
