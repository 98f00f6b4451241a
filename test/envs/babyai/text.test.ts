import { describe, expect, it } from 'vitest';
import { Act } from '../../../src/envs/babyai/constants.js';
import { Grid } from '../../../src/envs/babyai/grid.js';
import { formatActionList, TextRenderer } from '../../../src/envs/babyai/text.js';
import { GridWorld } from '../../../src/envs/babyai/world.js';
import { makeDoor, makeObject } from '../../../src/envs/babyai/world-object.js';

function room(): GridWorld {
  const grid = new Grid(8, 8);
  grid.wallRect(0, 0, 8, 8);
  const w = new GridWorld(grid, null);
  w.agentX = 2;
  w.agentY = 3;
  w.agentDir = 0; // east; right hand points south
  return w;
}

describe('TextRenderer', () => {
  it('describes visible objects relative to the agent, numbered per name by distance', () => {
    const w = room();
    w.grid.set(4, 4, makeObject('ball', 'red'));
    w.grid.set(6, 1, makeObject('ball', 'red'));
    w.grid.set(5, 3, makeObject('key', 'grey'));
    const state = new TextRenderer().observe(w);
    expect(state.description).toContain('There is a red ball 1 2 steps in front of you and 1 steps to your right.');
    expect(state.description).toContain('There is a grey key 1 right in front of you 3 steps away.');
    expect(state.description).toContain('There is a red ball 2 4 steps in front of you and 2 steps to your left.');
    expect(state.description).toContain('You are facing a wall 5 steps away.');
    expect(state.description).toContain('You are not carrying anything.');
  });

  it('lists actions in AgentGym order with plans that reach the object', () => {
    const w = room();
    w.grid.set(4, 4, makeObject('ball', 'red'));
    const state = new TextRenderer().observe(w);
    expect([...state.plans.keys()]).toEqual(['turn left', 'turn right', 'move forward', 'pickup red ball 1', 'go to red ball 1', 'check available actions']);
    const plan = state.plans.get('go to red ball 1') ?? [];
    for (const a of plan) w.step(a);
    expect([w.frontX, w.frontY]).toEqual([4, 4]);
  });

  it('reports a blocked move and an unreachable object as errors instead of actions', () => {
    const w = room();
    w.grid.set(3, 3, makeObject('box', 'blue'));
    // A ball in the top-right corner fenced in by boxes.
    w.grid.set(6, 1, makeObject('ball', 'green'));
    w.grid.set(5, 1, makeObject('box', 'grey'));
    w.grid.set(6, 2, makeObject('box', 'grey'));
    const state = new TextRenderer().observe(w);
    expect(state.plans.has('move forward')).toBe(false);
    expect(state.explain('move forward')).toMatch(/barrier/);
    expect(state.plans.has('go to green ball 1')).toBe(false);
    expect(state.explain('go to green ball 1')).toMatch(/no path/);
    expect(state.description).toContain('You are facing a box 1 steps away.');
  });

  it('offers drop when carrying and door actions by door state', () => {
    const w = room();
    w.carrying = makeObject('key', 'yellow');
    w.grid.set(5, 3, makeDoor('yellow', { locked: true }));
    w.grid.set(4, 5, makeDoor('red', { open: true }));
    const state = new TextRenderer().observe(w);
    expect(state.plans.has('drop')).toBe(true);
    expect(state.description).toContain('You are carrying a yellow key.');
    expect(state.plans.has('toggle and go through yellow locked door 1')).toBe(true);
    expect(state.plans.has('go through red open door 1')).toBe(true);
    expect(state.explain('go through yellow locked door 1')).toMatch(/toggle it first/);
    const plan = state.plans.get('toggle and go through yellow locked door 1') ?? [];
    expect(plan.slice(-2)).toEqual([Act.toggle, Act.forward]);
  });

  it('explains each impossible action in AgentGym words, as of the observation, and nothing for available or unknown ones', () => {
    const w = room();
    w.carrying = makeObject('key', 'blue');
    const locked = makeDoor('yellow', { locked: true });
    w.grid.set(5, 3, locked);
    w.grid.set(3, 3, makeObject('ball', 'red'));
    w.grid.set(4, 5, makeDoor('green'));
    const state = new TextRenderer().observe(w);
    expect(state.explain('move forward')).toBe("There is a barrier in front of you, you can't move forward.");
    expect(state.explain('drop')).toBe('You cannot drop the object, as there is already something in front of you.');
    expect(state.explain('go through yellow locked door 1')).toBe('You cannot go through yellow locked door 1, as it is locked. You should toggle it first.');
    expect(state.explain('toggle and go through yellow locked door 1')).toBe(
      'You cannot toggle and go through yellow locked door 1, as the colour of the key you are carrying does not match the colour of the door.',
    );
    expect(state.explain('go through green closed door 1')).toBe('You cannot go through green closed door 1, as it is closed. You should toggle it first.');
    expect(state.explain('toggle')).toBe('There is nothing right in front of you that you can toggle.');
    expect(state.explain('turn left')).toBeUndefined();
    expect(state.explain('go to red ball 1')).toBeUndefined();
    expect(state.explain('go to purple box 3')).toBeUndefined();
    // The words describe the world as observed, even after it changed.
    locked.isLocked = false;
    expect(state.explain('go through yellow locked door 1')).toMatch(/as it is locked\./);
    w.carrying = null;
    const empty = new TextRenderer().observe(w);
    expect(empty.explain('drop')).toBe('You cannot drop anything, as you are not carrying anything.');
    expect(empty.explain('toggle and go through yellow closed door 1')).toBeUndefined();
    expect(empty.actions).toEqual([...empty.plans.keys()]);
  });

  it('says so when nothing is in sight', () => {
    const w = room();
    expect(new TextRenderer().observe(w).description.startsWith('You see no objects.')).toBe(true);
  });

  it('formats the action list as AgentGym does', () => {
    expect(formatActionList(['turn left', 'turn right'])).toBe('Available actions: ["turn left", "turn right"]');
  });
});
