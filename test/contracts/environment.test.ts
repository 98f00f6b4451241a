import { BabyAIEnvironment } from '../../src/envs/babyai/env.js';
import { FrozenLakeEnvironment } from '../../src/envs/frozenlake/env.js';
import { MazeEnvironment } from '../../src/envs/maze/env.js';
import { DeepSearchEnvironment } from '../../src/envs/deepsearch/env.js';
import { SqlEnvironment } from '../../src/envs/sql/env.js';
import { SokobanEnvironment } from '../../src/envs/sokoban/env.js';
import { WordleEnvironment } from '../../src/envs/wordle/env.js';
import { TextCraftEnvironment } from '../../src/envs/textcraft/env.js';
import { vaultSpec } from '../helpers/vault-env.js';
import { runEnvironmentContract } from './environment.contract.js';

// GoToRedBall seeds 0 and 1, GoToLocalS8N7, OpenRedDoor, PickupDistDebug, GoToRedBallGrey seed 3.
runEnvironmentContract('babyai', () => new BabyAIEnvironment(), [1, 41, 4, 12, 19, 120]);
runEnvironmentContract('maze', () => new MazeEnvironment(), [0, 5, 13, 24]);
runEnvironmentContract('wordle', () => new WordleEnvironment(), [0, 1, 100, 558]);
runEnvironmentContract('sokoban', () => new SokobanEnvironment({ settings: { width: 7, height: 7, boxes: 2 } }), [0, 1, 1000, 1234]);
runEnvironmentContract('frozenlake', () => new FrozenLakeEnvironment({ settings: { slippery: true } }), [0, 1, 1000, 1234]);
runEnvironmentContract('sql', () => new SqlEnvironment(), [0, 3, 400, 1000]);
// acacia planks, blue dye, crafting table, barrel, purple banner (depths 1, 1, 2, 3, 4).
runEnvironmentContract('textcraft', () => new TextCraftEnvironment(), [0, 10, 182, 422, 546]);
runEnvironmentContract('deepsearch', () => new DeepSearchEnvironment(), [0, 1, 600, 2000]);
// A small environment that declares tools (the tool-calling tests' own).
runEnvironmentContract('vault', () => vaultSpec().create(), [0, 3, 7]);
