/**
 * What a run's checkpoint holds, from its stack: the model's `config.json` with the special-token
 * ids `generate` stops at, what trains (every weight, or a LoRA run's adapters with their
 * `adapter_config.json`), the tokenizer and the files the ecosystem needs beside it
 * (`tokenizer_config.json` with a chat template, `generation_config.json`), the optimizer and the
 * trainer state. So transformers (`AutoModelForCausalLM` / PEFT, `apply_chat_template`, `generate`)
 * and vLLM can use any checkpoint, of turnwise's own model too.
 */
import { resolve } from 'node:path';
import type { ResolvedConfig } from '../core/config.js';
import type { CheckpointContent, NamedTensors } from '../models/checkpoint.js';
import { adapterConfigJson } from '../models/lora/lora.js';
import type { PolicyText } from '../models/policy-text.js';
import type { TransformerModel } from '../models/transformer/model.js';

/**
 * The checkpoint of `stack` after `step` completed steps.
 * @example await saveCheckpoint(runDir, checkpointContentOf(config, stack, 10, optimizer, { policyVersion: 10 }));
 */
export function checkpointContentOf(
  config: ResolvedConfig,
  stack: { readonly learnerModel: TransformerModel; readonly text: PolicyText },
  step: number,
  optimizer: NamedTensors,
  state: Readonly<Record<string, unknown>>,
): CheckpointContent {
  const { learnerModel, text } = stack;
  const files = text.files({ modelMaxLength: learnerModel.config.maxContext, maxNewTokens: config.sampling.maxActionTokens });
  const tokenizer = files.find((f) => f.name === 'tokenizer.json');
  const lora = learnerModel.lora;
  return {
    step,
    hfConfig: learnerModel.toHfConfig(text.tokenIds),
    weights: learnerModel.namedWeights(),
    tokenizerJson: JSON.parse(tokenizer?.data ?? '{}') as object,
    optimizer,
    state,
    extraFiles: files.filter((f) => f.name !== 'tokenizer.json'),
    // PEFT resolves the base by this path (absolute, so the checkpoint folder can move).
    ...(lora === null ? {} : { adapterConfig: adapterConfigJson(lora, config.model.from === null ? null : resolve(config.model.from)) }),
  };
}
