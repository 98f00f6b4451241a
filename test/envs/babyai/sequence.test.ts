import { describe, expect, it } from 'vitest';
import type { PrimitiveAction } from '../../../src/envs/babyai/constants.js';
import { Act } from '../../../src/envs/babyai/constants.js';
import { Grid } from '../../../src/envs/babyai/grid.js';
import type { Instruction, VerifyStatus } from '../../../src/envs/babyai/instructions.js';
import { GoToInstr, ObjDesc, OpenInstr, PickupInstr, PutNextInstr } from '../../../src/envs/babyai/instructions.js';
import { RoomLayout } from '../../../src/envs/babyai/room-layout.js';
import { AfterInstr, AndInstr, BeforeInstr } from '../../../src/envs/babyai/sequence.js';
import { GridWorld } from '../../../src/envs/babyai/world.js';
import { makeDoor, makeObject } from '../../../src/envs/babyai/world-object.js';

/** An 8x8 room, agent at (3, 3) facing east; red ball at (4, 3) (in front), blue key at (3, 4) (to the right). */
function room(): GridWorld {
  const grid = new Grid(8, 8);
  grid.wallRect(0, 0, 8, 8);
  const w = new GridWorld(grid, new RoomLayout(8, 1, 1));
  w.agentX = 3;
  w.agentY = 3;
  w.agentDir = 0;
  w.grid.set(4, 3, makeObject('ball', 'red'));
  w.grid.set(3, 4, makeObject('key', 'blue'));
  return w;
}

const red = (): ObjDesc => new ObjDesc('ball', 'red');
const blue = (): ObjDesc => new ObjDesc('key', 'blue');

/** Applies a primitive and verifies, as the environment does (positions follow a drop). */
function act(w: GridWorld, instr: Instruction, a: PrimitiveAction): VerifyStatus {
  const changed = w.step(a);
  if (a === Act.drop && changed) instr.updateObjsPoss(w);
  return instr.verify(w, a);
}

describe('sequence instructions', () => {
  it('"A, then B" ignores B done before A and succeeds once B follows A', () => {
    const w = room();
    // go to the blue key, then go to the red ball: facing the ball first does not count.
    const instr = new BeforeInstr(new GoToInstr(blue()), new GoToInstr(red()));
    instr.resetVerifier(w);
    expect(instr.surface(w)).toBe('go to the blue key, then go to the red ball');
    expect(act(w, instr, Act.left)).toBe('continue'); // faces north
    expect(act(w, instr, Act.right)).toBe('continue'); // faces the ball again: B before A
    expect(instr.pending().map((p) => p.kind)).toEqual(['goTo', 'goTo']);
    expect(act(w, instr, Act.right)).toBe('continue'); // faces the key: A done
    expect(instr.pending()).toHaveLength(1);
    expect(act(w, instr, Act.left)).toBe('success'); // faces the ball: B after A
  });

  it('"A after you B" wants B first, and the hand-over step can complete A', () => {
    const w = room();
    const instr = new AfterInstr(new GoToInstr(red()), new GoToInstr(blue()));
    instr.resetVerifier(w);
    expect(instr.surface(w)).toBe('go to the red ball after you go to the blue key');
    expect(instr.pending()[0]?.kind).toBe('goTo');
    expect(act(w, instr, Act.left)).toBe('continue');
    expect(act(w, instr, Act.right)).toBe('continue'); // the ball first: does not count
    expect(act(w, instr, Act.right)).toBe('continue'); // the key: B done
    expect(act(w, instr, Act.left)).toBe('success');
  });

  it('"A and B" accepts either order and remembers each part', () => {
    const w = room();
    const instr = new AndInstr(new GoToInstr(red()), new PickupInstr(blue()));
    instr.resetVerifier(w);
    expect(instr.surface(w)).toBe('go to the red ball and pick up the blue key');
    expect(instr.pending()).toHaveLength(2);
    expect(act(w, instr, Act.right)).toBe('continue'); // faces the key (parts are checked on steps only)
    expect(instr.pending()).toHaveLength(2);
    expect(act(w, instr, Act.pickup)).toBe('continue'); // key picked up: B done
    expect(instr.pending().map((p) => p.kind)).toEqual(['goTo']);
    expect(act(w, instr, Act.left)).toBe('success'); // faces the ball: A done too
  });

  it('a strict second part may complete on the hand-over step but never fails on it', () => {
    // Two doors; "open the red door, then open the blue door", both strict (OpenDoorsOrderN4Debug).
    const w = room();
    const redDoor = makeDoor('red');
    w.grid.set(4, 3, redDoor);
    w.grid.set(2, 3, makeDoor('blue'));
    const instr = new BeforeInstr(new OpenInstr(new ObjDesc('door', 'red'), true), new OpenInstr(new ObjDesc('door', 'blue'), true));
    instr.resetVerifier(w);
    // Minigrid would fail here: the toggle that opens red counts as toggling a wrong door for blue.
    expect(act(w, instr, Act.toggle)).toBe('continue');
    expect(redDoor.isOpen).toBe(true);
    expect(act(w, instr, Act.left)).toBe('continue');
    expect(act(w, instr, Act.left)).toBe('continue'); // faces the blue door
    expect(act(w, instr, Act.toggle)).toBe('success');
  });

  it('a strict first part fails when a wrong door is toggled', () => {
    const w = room();
    w.grid.set(4, 3, makeDoor('green'));
    w.grid.set(2, 3, makeDoor('blue'));
    w.grid.set(3, 2, makeDoor('red'));
    const instr = new BeforeInstr(new OpenInstr(new ObjDesc('door', 'red'), true), new OpenInstr(new ObjDesc('door', 'blue')));
    instr.resetVerifier(w);
    expect(act(w, instr, Act.toggle)).toBe('failure');
  });

  it('counts navigations as the sum of its parts (put next to counts two)', () => {
    const instr = new BeforeInstr(new AndInstr(new GoToInstr(red()), new PickupInstr(blue())), new PutNextInstr(red(), blue()));
    expect(instr.navs).toBe(4);
  });
});

describe('put next to', () => {
  it('succeeds when the object just carried is dropped beside the fixed one', () => {
    const w = room();
    const instr = new PutNextInstr(red(), blue());
    instr.resetVerifier(w);
    expect(instr.surface(w)).toBe('put the red ball next to the blue key');
    expect(act(w, instr, Act.pickup)).toBe('continue'); // carrying the ball
    expect(act(w, instr, Act.left)).toBe('continue'); // faces north: (3, 2), not next to (3, 4)
    expect(act(w, instr, Act.drop)).toBe('continue'); // dropped at (3, 2): two cells from the key
    expect(act(w, instr, Act.pickup)).toBe('continue');
    expect(act(w, instr, Act.forward)).toBe('continue'); // front cell is empty now: moves to (3, 2)
    expect(act(w, instr, Act.right)).toBe('continue');
    expect(act(w, instr, Act.right)).toBe('continue'); // at (3, 2) facing south: front (3, 3)
    expect(act(w, instr, Act.drop)).toBe('success'); // (3, 3) is next to the key at (3, 4)
  });

  it('does not count a drop that fails because the cell in front is taken', () => {
    const w = room();
    const instr = new PutNextInstr(red(), blue());
    instr.resetVerifier(w);
    expect(act(w, instr, Act.pickup)).toBe('continue');
    w.agentX = 2;
    w.agentY = 4; // at (2, 4) facing east: the key's own cell is in front
    expect(act(w, instr, Act.drop)).toBe('continue');
    expect(w.carrying?.type).toBe('ball');
  });

  it('rejects nothing at verify time when the move object is already beside the fixed one (generation rejects it)', () => {
    const w = room();
    w.grid.set(3, 5, makeObject('ball', 'green'));
    const instr = new PutNextInstr(new ObjDesc('ball', 'green'), blue());
    instr.resetVerifier(w);
    expect(instr.objsNext(w)).toBe(true);
  });
});
