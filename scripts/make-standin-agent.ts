/**
 * Builds the stand-in "pretrained" agent folder (scripts/standin/agent.ts): a tiny Llama with a
 * ChatML tokenizer, pretrained by next-token prediction on chat transcripts of random play, for
 * trying `model.from` runs without downloading a model. The environment, conversation layout and
 * horizon come from a run config, so the folder talks exactly as that run will:
 *
 *     node --import tsx scripts/make-standin-agent.ts --out models/standin-babyai \
 *       --config configs/babyai-llm-lora.yaml --set env.settings.levels=[GoToRedBallNoDists]
 *     npm run turnwise -- train configs/babyai-llm-lora.yaml --set model.from=models/standin-babyai ...
 *
 * Options: --out (required), --config (default configs/babyai-llm-lora.yaml), --set key=value
 * (repeatable, applied to the config), --episodes (400), --epochs (4), --seed (the config's).
 */
import { parseArgs } from 'node:util';
import { loadConfig, resolveConfig } from '../src/core/config.js';
import { parseOverride } from '../src/core/config/overrides.js';
import { selectBackend } from '../src/backend/select.js';
import { chatTextOptionsOf } from '../src/runtime/pretrained-stack.js';
import { buildStandinAgent } from './standin/agent.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string' },
    config: { type: 'string', default: 'configs/babyai-llm-lora.yaml' },
    set: { type: 'string', multiple: true, default: [] },
    episodes: { type: 'string', default: '400' },
    epochs: { type: 'string', default: '4' },
    seed: { type: 'string' },
  },
});
if (values.out === undefined) {
  console.error('usage: make-standin-agent.ts --out <folder> [--config <yaml>] [--set key=value]... [--episodes N] [--epochs N] [--seed N]');
  process.exit(2);
}
const config = resolveConfig(loadConfig(values.config, values.set.map(parseOverride)));
const backend = await selectBackend(config.model.backend);
console.log(`backend: ${backend.name}; env ${config.env.name} ${JSON.stringify(config.env.settings)}, horizon ${config.derived.maxHorizon}`);
const started = Date.now();
let lastPrint = 0;
const report = await buildStandinAgent({
  folder: values.out,
  seed: values.seed === undefined ? config.seed : Number(values.seed),
  env: config.env,
  chat: chatTextOptionsOf(config, config.model.maxContext),
  episodes: Number(values.episodes),
  turns: config.derived.maxHorizon,
  epochs: Number(values.epochs),
  onStep: (step, steps, loss) => {
    if (Date.now() - lastPrint < 5000 && step + 1 < steps) return;
    lastPrint = Date.now();
    console.log(`step ${step + 1}/${steps}  loss ${loss.toFixed(3)}  ${((Date.now() - started) / 1000).toFixed(0)}s`);
  },
});
console.log(
  `wrote ${report.folder}: ${report.parameters.toLocaleString('en-US')} parameters, vocab ${report.vocabSize}, ${report.episodes} random episodes (success ${report.randomSuccessRate.toFixed(2)}) in ${report.sequences} sequences, ` +
    `epoch losses ${report.epochLosses.map((l) => l.toFixed(3)).join(' ')}, ${((Date.now() - started) / 1000).toFixed(0)}s`,
);
