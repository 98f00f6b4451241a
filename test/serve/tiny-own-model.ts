/**
 * turnwise's own model, untrained and tiny (d16, one layer, a 128-token context, BabyAI's
 * tokenizer), served on the cpu backend: enough for tests of the HTTP surface and the batching,
 * where validation and shapes matter, not the quality of the actions. Not a test file itself.
 */
import { parseConfig, resolveConfig } from '../../src/core/config.js';
import { Rng } from '../../src/core/rng.js';
import '../../src/envs/index.js';
import { getEnvironmentSpec } from '../../src/envs/registry.js';
import { selectBackend } from '../../src/backend/select.js';
import { TransformerModel } from '../../src/models/transformer/model.js';
import { transformerConfigOf, trainRunTokenizer } from '../../src/runtime/policy-stack.js';
import type { BpeTokenizer } from '../../src/models/tokenizer/bpe.js';
import { type LoadedModel, ownServedModel } from '../../src/serve/load-model.js';

/**
 * Builds the model and serves it under the id `tiny`, with its tokenizer and model; the caller disposes of `served`.
 * @example const { served } = await tinyOwnServedModel(); afterAll(() => served.dispose());
 */
export async function tinyOwnServedModel(): Promise<{ served: LoadedModel; tokenizer: BpeTokenizer; model: TransformerModel }> {
  const config = resolveConfig(
    parseConfig({
      seed: 4,
      env: { name: 'babyai', settings: { levels: ['GoToRedBall'] } },
      tokenizer: { vocabSize: 300, corpusEpisodes: 20 },
      model: { dModel: 16, nLayers: 1, nHeads: 2, ffnHidden: 32, maxContext: 128, backend: 'cpu' },
      context: { history: 1, includeInstruction: true },
    }),
  );
  await selectBackend('cpu');
  const tokenizer = trainRunTokenizer(config, getEnvironmentSpec('babyai'));
  const model = new TransformerModel(transformerConfigOf(config, tokenizer.vocabSize), Rng.fromSeed(4).fork('model'));
  return { served: ownServedModel({ id: 'tiny', config, tokenizer, model, envInstruction: 'Reach the goal.' }), tokenizer, model };
}
