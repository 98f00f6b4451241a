/**
 * Public surface of `turnwise/envs` (explicit whitelist).
 */
import './maze/register.js';
import './wordle/register.js';
import './sokoban/register.js';
import './frozenlake/register.js';
import './textcraft/register.js';
import './agentgym/register.js';
import './sql/register.js';
import './deepsearch/register.js';
export type { Environment, EnvironmentOptions, EnvironmentSpec, TaskCatalog } from './environment.js';
export { getEnvironmentSpec, listEnvironments, registerEnvironment } from './registry.js';
export type { JsonSchemaObject, JsonSchemaProperty, ParsedToolCall, ToolCall, ToolSpec } from './tools.js';
export { checkToolCall, looksLikeToolCallText, parseToolCallText, toolCallText } from './tools.js';
export type { ActionForm, RandomActionRequest, RandomActionSource } from './random-action.js';
export { readToolAction, stringTool, type ToolAction } from './tool-action.js';
export type { ParsedAction } from './parse-action.js';
export { MULTIPLE_ACTIONS_MESSAGE, normaliseAction, parseAction } from './parse-action.js';
export {
  BABYAI_INSTRUCTION,
  BABYAI_LEVELS,
  BabyAIEnvironment,
  BabyAIOracle,
  babyaiSpec,
  babyaiTaskIndex,
  babyaiTaskOf,
  extractGoal,
  implementedLevelNames,
} from './babyai/index.js';
