import { describe, expect, it } from 'vitest';
import { Act } from '../../../src/envs/babyai/constants.js';
import { Grid } from '../../../src/envs/babyai/grid.js';
import { GoToInstr, ObjDesc, OpenInstr, PickupInstr } from '../../../src/envs/babyai/instructions.js';
import { RoomLayout } from '../../../src/envs/babyai/room-layout.js';
import { GridWorld } from '../../../src/envs/babyai/world.js';
import { makeDoor, makeObject } from '../../../src/envs/babyai/world-object.js';

function room(): GridWorld {
  const layout = new RoomLayout(8, 1, 1);
  const grid = new Grid(8, 8);
  grid.wallRect(0, 0, 8, 8);
  const w = new GridWorld(grid, layout);
  w.agentX = 3;
  w.agentY = 3;
  w.agentDir = 0;
  return w;
}

describe('object descriptions', () => {
  it('says "the" for a unique match and "a" for several', () => {
    const w = room();
    w.grid.set(5, 5, makeObject('ball', 'red'));
    expect(new ObjDesc('ball', 'red').surface(w)).toBe('the red ball');
    w.grid.set(6, 6, makeObject('ball', 'red'));
    expect(new ObjDesc('ball', 'red').surface(w)).toBe('a red ball');
  });

  it('describes by type only or colour only', () => {
    const w = room();
    w.grid.set(5, 5, makeObject('key', 'blue'));
    expect(new ObjDesc('key').surface(w)).toBe('the key');
    expect(new ObjDesc(null, 'blue').surface(w)).toBe('the blue object');
  });

  it('matches locations relative to the agent start pose', () => {
    const w = room(); // facing east: right is south
    const south = makeObject('box', 'green');
    const north = makeObject('box', 'green');
    w.grid.set(3, 5, south);
    w.grid.set(3, 1, north);
    const desc = new ObjDesc('box', 'green', 'right');
    expect(desc.surface(w)).toBe('the green box on your right');
    expect(desc.objSet).toEqual([south]);
  });
});

describe('verifiers', () => {
  it('go to succeeds only when the object is in the cell in front', () => {
    const w = room();
    w.grid.set(5, 3, makeObject('ball', 'red'));
    const instr = new GoToInstr(new ObjDesc('ball', 'red'));
    instr.resetVerifier(w);
    expect(instr.verify(w)).toBe('continue');
    w.step(Act.forward);
    expect(instr.verify(w)).toBe('success');
    w.step(Act.left);
    expect(instr.verify(w)).toBe('continue');
  });

  it('go to follows an object after it was dropped elsewhere', () => {
    const w = room();
    const ball = makeObject('ball', 'red');
    w.grid.set(4, 3, ball);
    const instr = new GoToInstr(new ObjDesc('ball', 'red'));
    instr.resetVerifier(w);
    w.step(Act.pickup);
    w.step(Act.left);
    w.step(Act.drop);
    instr.updateObjsPoss(w);
    expect(instr.verify(w)).toBe('success');
  });

  it('pick up succeeds on picking a matching object; strict mode fails on a wrong one', () => {
    const w = room();
    w.grid.set(4, 3, makeObject('key', 'grey'));
    w.grid.set(3, 2, makeObject('ball', 'grey'));
    const lenient = new PickupInstr(new ObjDesc('ball'));
    const strict = new PickupInstr(new ObjDesc('ball'), true);
    lenient.resetVerifier(w);
    strict.resetVerifier(w);
    w.step(Act.pickup);
    expect(lenient.verify(w, Act.pickup)).toBe('continue');
    expect(strict.verify(w, Act.pickup)).toBe('failure');

    const w2 = room();
    w2.grid.set(4, 3, makeObject('ball', 'grey'));
    const ok = new PickupInstr(new ObjDesc('ball'));
    ok.resetVerifier(w2);
    w2.step(Act.pickup);
    expect(ok.verify(w2, Act.pickup)).toBe('success');
  });

  it('open succeeds when a toggle opens the matching door in front', () => {
    const w = room();
    const red = makeDoor('red');
    w.grid.set(4, 3, red);
    const instr = new OpenInstr(new ObjDesc('door', 'red'));
    instr.resetVerifier(w);
    expect(instr.verify(w, Act.forward)).toBe('continue');
    w.step(Act.toggle);
    expect(instr.verify(w, Act.toggle)).toBe('success');
  });

  it('counts one navigation per simple instruction (sets the step budget)', () => {
    expect(new GoToInstr(new ObjDesc('ball')).navs).toBe(1);
  });
});
