/**
 * ASCII map of the true state (MiniGrid `pprint_grid` style: two characters per cell), for
 * viewers and debugging. Never shown to the agent.
 */
import type { GridWorld } from './world.js';

const KIND: Record<string, string> = { wall: 'W', key: 'K', ball: 'A', box: 'B' };
const AGENT = ['>>', 'VV', '<<', '^^'];

/**
 * Renders the grid: `W` wall, `K` key, `A` ball, `B` box, `D`/`L` closed/locked door, `__` open
 * door, second letter = colour initial (grey `G`, green `g`... see legend), agent as arrows.
 * @example renderWorld(world).split('\n')[0] // 'WGWGWG...'
 */
export function renderWorld(world: GridWorld, mission?: string): string {
  const { grid } = world;
  const rows: string[] = [];
  for (let y = 0; y < grid.height; y++) {
    let row = '';
    for (let x = 0; x < grid.width; x++) {
      if (x === world.agentX && y === world.agentY) {
        row += AGENT[world.agentDir];
        continue;
      }
      const cell = grid.get(x, y);
      if (cell === null) row += '  ';
      else if (cell.type === 'door') row += cell.isOpen ? '__' : `${cell.isLocked ? 'L' : 'D'}${colourLetter(cell.color)}`;
      else row += `${KIND[cell.type] ?? '?'}${colourLetter(cell.color)}`;
    }
    rows.push(row);
  }
  const carrying = world.carrying === null ? 'nothing' : `${world.carrying.color} ${world.carrying.type}`;
  const header = mission === undefined ? [] : [`mission: ${mission}`];
  return [...header, ...rows, `step ${world.stepCount}/${world.maxSteps}, carrying ${carrying}`].join('\n');
}

/** Colour initial; grey and green would clash, so green is lower-case. */
function colourLetter(color: string): string {
  return color === 'green' ? 'g' : (color[0] ?? '?').toUpperCase();
}
