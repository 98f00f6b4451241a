/**
 * MiniGrid vocabulary: colours, object kinds, directions and primitive actions.
 *
 * Numbering follows MiniGrid (`minigrid/core/constants.py`, `minigrid/core/actions.py`) so that
 * traces can be compared with the Python original: direction 0 points to +x (east), 1 to +y
 * (south, screen down), 2 to -x, 3 to -y.
 */

/** The six MiniGrid colours, in MiniGrid's order (its random colour draws index this list). */
export const COLORS = ['red', 'green', 'blue', 'purple', 'yellow', 'grey'] as const;

/**
 * The colours in the order Minigrid's random draws index them (`COLOR_NAMES = sorted(COLORS)`),
 * which is not the encoding order above.
 */
export const MINIGRID_DRAW_COLORS = ['blue', 'green', 'grey', 'purple', 'red', 'yellow'] as const;

/** One of the six MiniGrid colours. */
export type Color = (typeof COLORS)[number];

/** Kinds of cell content this port models (MiniGrid's goal/lava/floor are not used by BabyAI). */
export type ObjectType = 'wall' | 'door' | 'key' | 'ball' | 'box';

/** Kinds an instruction may name (BabyAI `OBJ_TYPES`). */
export const DESCRIBABLE_TYPES = ['box', 'ball', 'key', 'door'] as const;

/** A kind an instruction may name. */
export type DescribableType = (typeof DESCRIBABLE_TYPES)[number];

/** Kinds that can be carried (and are drawn as distractors). */
export const PICKABLE_TYPES = ['key', 'ball', 'box'] as const;

/** A kind that can be carried. */
export type PickableType = (typeof PICKABLE_TYPES)[number];

/** Agent heading: 0 east (+x), 1 south (+y), 2 west (-x), 3 north (-y). */
export type Direction = 0 | 1 | 2 | 3;

/** [4] x component of each heading's unit vector. */
export const DIR_DX: readonly number[] = [1, 0, -1, 0];
/** [4] y component of each heading's unit vector. */
export const DIR_DY: readonly number[] = [0, 1, 0, -1];

/**
 * MiniGrid's primitive actions with their MiniGrid indices.
 * @example world.step(Act.forward)
 */
export const Act = { left: 0, right: 1, forward: 2, pickup: 3, drop: 4, toggle: 5, done: 6 } as const;

/** A primitive action index (0..6). */
export type PrimitiveAction = (typeof Act)[keyof typeof Act];

/** Side length of the agent's square egocentric view (MiniGrid `agent_view_size`). */
export const VIEW_SIZE = 7;

/** Directions relative to the agent's starting pose used in BabyAI descriptions (`LOC_NAMES`). */
export const LOC_NAMES = ['left', 'right', 'front', 'behind'] as const;

/** A relative location word. */
export type LocName = (typeof LOC_NAMES)[number];
