/**
 * Sokoban settings, task ids and splits: task `sokoban_<n>` is the room generated from seed `n`
 * with the configured size and box count; test = seeds 0-199, train = seeds 1000-20999.
 */
import { z } from 'zod';
import type { Split } from '../../core/types.js';
import type { EnvironmentOptions, TaskCatalog } from '../environment.js';
import { parseEnvSettings } from '../settings.js';
import type { RoomSpec } from './generate.js';

/** `env.settings` of Sokoban (defaults: RAGEN's 6 x 6 room with one box, 100 moves). */
export const sokobanSettingsSchema = z
  .object({
    width: z.number().int().min(4).max(16).default(6).describe('Room columns, including the outer wall.'),
    height: z.number().int().min(4).max(16).default(6).describe('Room rows, including the outer wall.'),
    boxes: z.number().int().min(1).max(6).default(1).describe('Boxes (and targets) per room.'),
    maxSteps: z.number().int().positive().default(100).describe('Moves before the episode ends unsolved.'),
    minSolutionMoves: z.number().int().min(1).default(3).describe('Shortest optimal solution a generated room may have, in moves.'),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.boxes + 2 > (s.width - 2) * (s.height - 2)) {
      ctx.addIssue({ code: 'custom', path: ['boxes'], message: `too many for a ${s.width}x${s.height} room, got ${s.boxes}` });
    }
    if (s.minSolutionMoves > s.maxSteps) {
      ctx.addIssue({ code: 'custom', path: ['minSolutionMoves'], message: `must not exceed maxSteps (${s.maxSteps}), got ${s.minSolutionMoves}` });
    }
  });

/** Parsed Sokoban settings. */
export type SokobanSettings = z.output<typeof sokobanSettingsSchema>;

/** Test seeds: [0, SOKOBAN_TEST_SEEDS). */
export const SOKOBAN_TEST_SEEDS = 200;
/** Train seeds: [SOKOBAN_TRAIN_START, SOKOBAN_TRAIN_START + SOKOBAN_TRAIN_SEEDS). */
export const SOKOBAN_TRAIN_START = 1000;
export const SOKOBAN_TRAIN_SEEDS = 20000;

/**
 * Reads and checks `env.settings`.
 * @example sokobanSettings({ settings: { boxes: 2, width: 7, height: 7 } }).maxSteps // 100
 */
export function sokobanSettings(options?: EnvironmentOptions): SokobanSettings {
  return parseEnvSettings(sokobanSettingsSchema, options);
}

/**
 * The generator spec of the settings: solutions must fit in `maxSteps`.
 * @example roomSpec(sokobanSettings()) // { width: 6, height: 6, boxes: 1, minSolutionMoves: 3, maxSolutionMoves: 100 }
 */
export function roomSpec(settings: SokobanSettings): RoomSpec {
  return { width: settings.width, height: settings.height, boxes: settings.boxes, minSolutionMoves: settings.minSolutionMoves, maxSolutionMoves: settings.maxSteps };
}

const range = (first: number, count: number): readonly number[] => Object.freeze(Array.from({ length: count }, (_, i) => first + i));

/**
 * @example createSokobanCatalog().indices('test').length // 200
 */
export function createSokobanCatalog(options?: EnvironmentOptions): TaskCatalog {
  const settings = sokobanSettings(options);
  const test = range(0, SOKOBAN_TEST_SEEDS);
  const train = range(SOKOBAN_TRAIN_START, SOKOBAN_TRAIN_SEEDS);
  const category = `${settings.width}x${settings.height}-${settings.boxes}box`;
  return { indices: (split: Split) => (split === 'test' ? test : train), category: () => category };
}
