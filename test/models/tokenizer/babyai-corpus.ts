/**
 * Synthetic BabyAI-style observations for tokenizer tests and measurements: the sample text of the
 * task brief with colours, object types, counts, distances and sides varied by a seeded stream.
 */
import { Rng } from '../../../src/core/rng.js';

const COLOURS = ['red', 'green', 'blue', 'purple', 'yellow', 'grey'];
const TYPES = ['ball', 'box', 'key', 'door'];

/**
 * One observation, e.g. "In front of you in this room, you can see several objects: There is a grey
 * box 1 2 steps in front of you and 1 steps to your left. … Available actions: [...]".
 * @example babyAiObservation(Rng.fromSeed(1))
 */
export function babyAiObservation(rng: Rng): string {
  const count = 1 + rng.int(4);
  const objects: string[] = [];
  const sentences: string[] = [];
  for (let k = 0; k < count; k++) {
    const name = `${rng.pick(COLOURS)} ${rng.pick(TYPES)} ${1 + rng.int(2)}`;
    objects.push(name);
    const ahead = rng.int(7);
    const side = rng.int(4);
    const sideText = side === 0 ? '' : ` and ${side} steps to your ${rng.pick(['left', 'right'])}`;
    const aheadText = ahead === 0 ? `${side === 0 ? 1 : side} steps to your ${rng.pick(['left', 'right'])}` : `${ahead} steps in front of you${sideText}`;
    sentences.push(`There is a ${name} ${aheadText}.`);
  }
  const carrying = rng.int(3) === 0 ? `You are carrying a ${rng.pick(COLOURS)} ${rng.pick(TYPES)}.` : 'You are not carrying anything.';
  const actions = ['turn left', 'turn right', 'move forward', ...objects.map((o) => `go to ${o}`), ...objects.map((o) => `pickup ${o}`), 'check available actions'];
  return (
    `In front of you in this room, you can see several objects: ${sentences.join(' ')} The room has walls around you. ${carrying}\n` +
    `Available actions: [${actions.map((a) => JSON.stringify(a)).join(', ')}]`
  );
}

/**
 * `size` observations from one seed.
 * @example babyAiCorpus(7, 1000).length // 1000
 */
export function babyAiCorpus(seed: number, size: number): string[] {
  const rng = Rng.fromSeed(seed);
  return Array.from({ length: size }, () => babyAiObservation(rng));
}

/** The sample observation from the task brief. */
export const SAMPLE_OBSERVATION =
  'In front of you in this room, you can see several objects: There is a grey box 1 2 steps in front of you and 1 steps to your left. There is a red ball 1 3 steps in front of you. The room has walls around you. You are not carrying anything.\nAvailable actions: ["turn left", "turn right", "move forward", "go to grey box 1", "go to red ball 1", "pickup grey box 1", "pickup red ball 1", "check available actions"]';
