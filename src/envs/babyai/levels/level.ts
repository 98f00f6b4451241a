/**
 * What a BabyAI level is: a name, a reporting category and a generator that builds a grid, an
 * agent pose and an instruction from a random stream.
 */
import { EnvironmentError } from '../../../core/errors.js';
import type { Instruction } from '../instructions.js';
import type { BabyAIGenerator, LevelRandom } from '../level-random.js';
import { MinigridRandom, turnwiseLevelRandom } from '../level-random.js';
import type { LevelCarry } from '../room-grid.js';
import { LevelBuilder, RejectSampling } from '../room-grid.js';
import type { WorldObj } from '../world-object.js';
import type { GridWorld } from '../world.js';
import { validateInstruction } from './validate.js';

/** Room-grid shape a level is built on. */
export interface LevelShape {
  readonly roomSize: number;
  readonly numRows: number;
  readonly numCols: number;
  /** Fixed primitive step budget; when absent, BabyAI's `navs * roomSize² * rooms` applies. */
  readonly maxSteps?: number;
}

/** A level generator: fills the builder and returns the instruction (BabyAI `gen_mission`). */
export interface LevelGenerator {
  readonly shape: LevelShape;
  readonly genMission: (b: LevelBuilder) => Instruction;
  /**
   * BabyAI `LevelGen.unblocking`: when true, instructions naming a key whose colour opens a locked
   * door are rejected (they would let the agent succeed by accident or get stuck).
   */
  readonly unblocking?: boolean;
  /**
   * The level keeps state across attempts and resets (Minigrid `LevelGen.locked_room` with
   * implicit unlocking off): Minigrid's generator then replays AgentGym's two resets (its `BabyAI`
   * wrapper resets once in its constructor and the server resets again), since the first one's
   * state shapes the second.
   */
  readonly carriesState?: boolean;
}

/** A generated episode start. */
export interface GeneratedLevel {
  readonly world: GridWorld;
  readonly instruction: Instruction;
  /** Mission text, e.g. "go to the red ball". */
  readonly mission: string;
  /** Rejected attempts before this one (0 = first draw accepted). */
  readonly rejections: number;
  /**
   * The object the agent starts carrying and the cell it was generated on (PutNext
   * `start_carrying`), or null. Minigrid's reset observation is made before the object is taken
   * off the grid, and AgentGym describes that observation.
   */
  readonly startCarrying: { readonly obj: WorldObj; readonly x: number; readonly y: number } | null;
}

/**
 * Reporting categories of BabyAI levels. `GoTo`, `Pickup`, `AOD`, `Find`, `Room`, `SLoc` are the
 * names AgentGym-RL reports under; the others group the remaining levels by their BabyAI family.
 */
export type LevelCategory = 'GoTo' | 'Pickup' | 'AOD' | 'Find' | 'Room' | 'SLoc' | 'Open' | 'PutNext' | 'Unlock' | 'Synth';

/** One entry of the 40-level list. */
export interface LevelSpec {
  /** Short name, e.g. `GoToRedBall` (what `settings.levels` accepts). */
  readonly name: string;
  /** Gymnasium id, e.g. `BabyAI-GoToRedBall-v0`. */
  readonly gymId: string;
  readonly category: LevelCategory;
  readonly generator: LevelGenerator;
  /** Default horizon in turns (`levels/horizons.ts`): 20, or more where text actions need more. */
  readonly horizon: number;
}

/** Attempts before generation gives up (no level comes near it: see the bot benchmark). */
export const MAX_ATTEMPTS = 1000;

/**
 * Builds a level for `seed`, deterministically: same (level, seed, generator), same episode.
 *
 * - `turnwise` (the default here): the first attempt draws from the level's xoroshiro stream;
 *   rejected attempt k redraws from the fork `reject/k` of it, so every attempt is a pure function
 *   of (level, seed, k).
 * - `minigrid`: Minigrid 2.4.0's `reset(seed=seed)`, draw for draw: NumPy's stream seeded with
 *   `seed`, every rejected attempt continuing the same stream, and Minigrid's semantics where
 *   turnwise's differ (see {@link LevelBuilder.minigrid}).
 *
 * Either stops after {@link MAX_ATTEMPTS} with an error naming the level and seed (Minigrid would
 * loop for ever).
 * @example const { world, mission } = generateLevel(goToRedBall, 'GoToRedBall', 3, 'minigrid');
 */
export function generateLevel(generator: LevelGenerator, levelName: string, seed: number, mode: BabyAIGenerator = 'turnwise'): GeneratedLevel {
  if (mode === 'turnwise') {
    const base = turnwiseLevelRandom(levelName, seed);
    return attempts(generator, levelName, seed, (attempt) => (attempt === 0 ? base : base.fork('reject', attempt)), false, {});
  }
  const carry: LevelCarry = {};
  if (generator.carriesState === true) {
    const rng = new MinigridRandom(seed);
    attempts(generator, levelName, seed, () => rng, true, carry);
  }
  const rng = new MinigridRandom(seed);
  return attempts(generator, levelName, seed, () => rng, true, carry);
}

function attempts(generator: LevelGenerator, levelName: string, seed: number, streamOf: (attempt: number) => LevelRandom, minigrid: boolean, carry: LevelCarry): GeneratedLevel {
  const { roomSize, numRows, numCols } = generator.shape;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const b = new LevelBuilder(streamOf(attempt), roomSize, numRows, numCols, minigrid, carry);
    try {
      const instruction = generator.genMission(b);
      validateInstruction(b, instruction, generator.unblocking === true);
      const mission = instruction.surface(b.world);
      instruction.resetVerifier(b.world);
      const world = b.world;
      let startCarrying: GeneratedLevel['startCarrying'] = null;
      if (b.startCarrying !== null) {
        const at = world.grid.find(b.startCarrying);
        if (at !== null) {
          world.grid.set(at.x, at.y, null);
          startCarrying = { obj: b.startCarrying, x: at.x, y: at.y };
        }
        world.carrying = b.startCarrying;
      }
      world.maxSteps = generator.shape.maxSteps ?? instruction.navs * roomSize * roomSize * numRows * numCols;
      return { world, instruction, mission, rejections: attempt, startCarrying };
    } catch (error) {
      if (error instanceof RejectSampling) continue;
      throw error;
    }
  }
  throw new EnvironmentError('babyai', `level ${levelName} seed ${seed}: generation rejected ${MAX_ATTEMPTS} attempts`);
}
