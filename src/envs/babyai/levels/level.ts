/**
 * What a BabyAI level is: a name, a reporting category and (when implemented) a generator that
 * builds a grid, an agent pose and an instruction from a random stream.
 */
import { Rng } from '../../../core/rng.js';
import type { Instruction } from '../instructions.js';
import { LevelBuilder, RejectSampling } from '../room-grid.js';
import type { GridWorld } from '../world.js';

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
}

/** A generated episode start. */
export interface GeneratedLevel {
  readonly world: GridWorld;
  readonly instruction: Instruction;
  /** Mission text, e.g. "go to the red ball". */
  readonly mission: string;
}

/** Reporting categories of BabyAI levels. */
export type LevelCategory = 'GoTo' | 'Open' | 'Pickup' | 'PutNext' | 'Unlock' | 'Find' | 'Synth';

/** One entry of the 40-level list. */
export interface LevelSpec {
  /** Short name, e.g. `GoToRedBall` (what `settings.levels` accepts). */
  readonly name: string;
  /** Gymnasium id, e.g. `BabyAI-GoToRedBall-v0`. */
  readonly gymId: string;
  readonly category: LevelCategory;
  /** Absent while the level is only listed. */
  readonly generator?: LevelGenerator;
}

const MAX_ATTEMPTS = 1000;

/**
 * Builds level `spec` for `seed`, deterministically: same (level, seed), same episode.
 * Rejected attempts continue the same random stream, as MiniGrid's rejection sampling does.
 * @example const { world, mission } = generateLevel(GO_TO_RED_BALL, 3);
 */
export function generateLevel(generator: LevelGenerator, levelName: string, seed: number): GeneratedLevel {
  const rng = Rng.fromSeed(seed).fork(`babyai/${levelName}`);
  const { roomSize, numRows, numCols } = generator.shape;
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const b = new LevelBuilder(rng, roomSize, numRows, numCols);
    let instruction: Instruction;
    try {
      instruction = generator.genMission(b);
      const mission = instruction.surface(b.world);
      instruction.resetVerifier(b.world);
      const world = b.world;
      world.maxSteps = generator.shape.maxSteps ?? instruction.navs * roomSize * roomSize * numRows * numCols;
      return { world, instruction, mission };
    } catch (error) {
      if (error instanceof RejectSampling) continue;
      throw error;
    }
  }
  throw new RangeError(`generateLevel: ${levelName} seed ${seed} rejected ${MAX_ATTEMPTS} attempts`);
}
