/**
 * A model folder's `config.json` is checked against its weight files from the numbers alone,
 * before anything per layer is built: a config that declares 3,000,000 layers would otherwise
 * have the loader build a list of 27 million weight names (and gigabytes) before any size check.
 *
 * The parameter count is computed in closed form (the same count as summing
 * `weightSpecs(config)`, which the unit tests check), and the files must be able to hold that many
 * parameters at the smallest stored width turnwise reads (2 bytes: BF16/F16).
 */
import { CheckpointError } from '../../core/errors.js';
import { headDim, keyValueWidth, queryWidth, type TransformerConfig } from '../transformer/config.js';

/** Smallest bytes per stored parameter among the dtypes turnwise reads (BF16, F16). */
const MIN_BYTES_PER_PARAMETER = 2;

/**
 * Parameters of a model shape, without building its weight list (a tied head counted once).
 * @example parameterCountOf(smolLm2Shape) // 134515008
 */
export function parameterCountOf(config: TransformerConfig): number {
  const { vocabSize: v, dModel: d, ffnHidden: f, nLayers } = config;
  const q = queryWidth(config);
  const kv = keyValueWidth(config);
  let layer = 2 * d + d * q + 2 * d * kv + q * d + 3 * d * f;
  if (config.qkvBias) layer += q + 2 * kv;
  if (config.qkNorm) layer += 2 * headDim(config);
  if (config.outputBias) layer += d;
  if (config.mlpBias) layer += 2 * f + d;
  return v * d + nLayers * layer + d + (config.tieEmbeddings ? 0 : v * d);
}

/**
 * Refuses a config whose shape the weight files cannot hold; milliseconds whatever the numbers.
 * @throws CheckpointError naming `config.json`, its shape and the files' size.
 * @example checkShapeFitsFiles(info.config, info.weights.bytes, 'models/x/config.json');
 */
export function checkShapeFitsFiles(config: TransformerConfig, weightBytes: number, configPath: string): void {
  const parameters = parameterCountOf(config);
  if (parameters * MIN_BYTES_PER_PARAMETER <= weightBytes) return;
  const shape = `num_hidden_layers ${config.nLayers}, hidden_size ${config.dModel}, intermediate_size ${config.ffnHidden}, vocab_size ${config.vocabSize}`;
  throw new CheckpointError(
    configPath,
    `its shape (${shape}) has ${parameters.toExponential(3)} parameters, at least ${formatSize(parameters * MIN_BYTES_PER_PARAMETER)} at ${MIN_BYTES_PER_PARAMETER} bytes each, but the weight files hold ${formatSize(weightBytes)}: config.json does not describe these weights`,
  );
}

function formatSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}
