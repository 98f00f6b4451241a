/**
 * Typed registries for the plug-in points a user extends without forking: advantage estimators,
 * policy losses and reward shapers (environments have their own registry in `src/envs/`). Each
 * registry is created by the layer that owns the plug-in type (`src/algorithms/`), and built-ins
 * are registered the same way as user plug-ins. The registries are kept here, by kind, so that the
 * config (also in core) can check a name and its `settings` against them while parsing, without
 * importing a higher layer.
 */
import type { z } from 'zod';
import { InvalidArgumentError, InvalidConfigError } from './errors.js';
import { anotherCopyHint, noteRegistration } from './plugin-copies.js';

/** The plug-in points. */
export type PluginKind = 'advantageEstimator' | 'policyLoss' | 'rewardShaper';

/** What every plug-in declares. */
export interface PluginEntry {
  /** Unique name, as the config spells it (letters, digits, `_`, `-`). */
  readonly name: string;
  /** One line for error messages and listings. */
  readonly description: string;
  /** Schema of the plug-in's `settings` in the config (default: none allowed). */
  readonly settings?: z.ZodType;
  /** Shipped with turnwise (set by the built-ins' registration). */
  readonly builtIn?: boolean;
}

const NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;
const byKind = new Map<PluginKind, PluginRegistry<PluginEntry>>();

/**
 * One registry: name -> entry, in registration order.
 * @example
 * const losses = new PluginRegistry<MyLoss>('policyLoss', 'policy loss', 'algorithm.policyLoss');
 * losses.register({ name: 'ppo-clip', description: '…', loss });
 */
export class PluginRegistry<T extends PluginEntry> {
  private readonly entries = new Map<string, T>();

  constructor(
    readonly kind: PluginKind,
    /** What one entry is called in messages ("advantage estimator"). */
    readonly label: string,
    /** The config field that names an entry (for errors). */
    readonly field: string,
  ) {
    if (byKind.has(kind)) throw new Error(`PluginRegistry: a '${kind}' registry exists already`);
    byKind.set(kind, this as unknown as PluginRegistry<PluginEntry>);
  }

  /** Adds an entry; names are unique. */
  register(entry: T): void {
    if (!NAME.test(entry.name)) throw InvalidArgumentError.format('name', `a ${this.label} name is letters, digits, '_' or '-', starting with a letter; got ${JSON.stringify(entry.name)}`);
    if (this.entries.has(entry.name)) throw InvalidArgumentError.format('name', `${this.label} '${entry.name}' is already registered`);
    this.entries.set(entry.name, entry);
    noteRegistration(this.kind, entry.name);
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** The entry named `name`; unknown names throw, naming the config field and every valid name. */
  get(name: string): T {
    const entry = this.entries.get(name);
    if (entry === undefined) throw new InvalidConfigError(this.field, `unknown ${this.label} '${name}'; valid: ${this.names().join(', ')}${anotherCopyHint(this.kind, name)}`);
    return entry;
  }

  /** Names in registration order (built-ins first). */
  names(): string[] {
    return [...this.entries.keys()];
  }

  list(): T[] {
    return [...this.entries.values()];
  }
}

/**
 * The registry of a kind, when the layer that owns it has been loaded.
 * @example pluginRegistry('advantageEstimator')?.names()
 */
export function pluginRegistry(kind: PluginKind): PluginRegistry<PluginEntry> | undefined {
  return byKind.get(kind);
}
