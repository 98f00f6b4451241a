import { BabyAIEnvironment } from '../../src/envs/babyai/env.js';
import { runEnvironmentContract } from './environment.contract.js';

// GoToRedBall seeds 0 and 1, GoToLocalS8N7, OpenRedDoor, PickupDistDebug, GoToRedBallGrey seed 3.
runEnvironmentContract('babyai', () => new BabyAIEnvironment(), [1, 41, 4, 12, 19, 120]);
