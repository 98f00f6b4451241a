/**
 * Flag value parsers shared by the commands; a bad value is a commander argument error, which
 * commander reports naming the flag (and the command exits 2).
 */
import { InvalidArgumentError as CommanderArgumentError } from 'commander';

/**
 * A positive integer flag value.
 * @example positiveInt('8') // 8
 */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n <= 0) throw new CommanderArgumentError(`expected a positive integer, got '${value}'`);
  return n;
}

/**
 * A port or count where 0 is meaningful (a free port, "never").
 * @example nonNegativeInt('0') // 0
 */
export function nonNegativeInt(value: string): number {
  return value === '0' ? 0 : positiveInt(value);
}

/**
 * Accumulates a repeatable option.
 * @example program.option('--set <kv>', '…', collect, [])
 */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/**
 * A smoothing weight in [0, 1) (`turnwise plot --smooth`).
 * @example smoothingWeight('0.9') // 0.9
 */
export function smoothingWeight(value: string): number {
  const w = Number(value);
  if (!(value.trim() !== '' && w >= 0 && w < 1)) throw new CommanderArgumentError(`expected a weight in [0, 1) such as 0.6, got '${value}'`);
  return w;
}
