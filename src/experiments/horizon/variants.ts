/**
 * The variants of the ScalingInter-RL experiment: fixed short, fixed long, stepwise and adaptive
 * horizon schedules, derived from the base config's horizon section or given by its `experiment:`
 * section. Pure.
 *
 * Derivation: from a `stepwise` base `[h0, ..., hn] every E` —
 * short = fixed h0, long = fixed hn, stepwise = the base, adaptive = start h0, step h1 - h0, max hn,
 * raising on mastery (rolling success >= 0.7), binding (truncation >= 0.8) or a plateau of E/2 steps,
 * window 3, cooldown 3. A `linear` or `adaptive` base gives short = start, long = max and a stepwise
 * ladder start..max with `every` (linear) or steps/stages (adaptive). Every variant is evaluated at
 * the long horizon (`evalHorizon`), so held-out success compares like with like.
 */
import { z } from 'zod';
import { InvalidConfigError } from '../../core/errors.js';
import type { HorizonConfig, SingleHorizonConfig } from '../../core/config/schema.js';

/** One arm of the experiment. */
export interface HorizonVariant {
  /** Short name used in run folders, tables and legends (e.g. `fixed-3`). */
  readonly name: string;
  /** The `horizon:` section the variant trains with (evalHorizon included). */
  readonly horizon: SingleHorizonConfig;
}

/** The optional `experiment:` section of an experiment config (stripped before training). */
export const experimentSectionSchema = z
  .object({
    seeds: z.number().int().positive().optional().describe('Seeds per variant (default 3; --seeds overrides).'),
    steps: z.number().int().positive().optional().describe('Training steps per run (default train.steps; --steps overrides).'),
    evalHorizon: z.number().int().positive().optional().describe('Horizon of held-out evaluations for every variant (default: the long variant\'s).'),
    variants: z
      .record(z.string().regex(/^[A-Za-z0-9_.-]+$/), z.record(z.string(), z.unknown()))
      .optional()
      .describe('Variant name -> its horizon section (replaces the derived variants).'),
  })
  .strict();

/** Parsed `experiment:` section. */
export type ExperimentSection = z.output<typeof experimentSectionSchema>;

function ladder(start: number, step: number, max: number): number[] {
  const out: number[] = [];
  for (let h = start; h < max; h += step) out.push(h);
  return [...out, max];
}

/**
 * Variants derived from a base horizon section (see the file comment for the rules).
 * @example deriveVariants({ schedule: 'stepwise', horizons: [3, 6, 12], every: 10 }, 30).map((v) => v.name) // ['fixed-3', 'fixed-12', 'stepwise', 'adaptive']
 */
export function deriveVariants(base: HorizonConfig, steps: number, evalHorizon?: number): HorizonVariant[] {
  let stages: number[];
  let every: number;
  switch (base.schedule) {
    case 'stepwise':
      stages = [...base.horizons];
      every = base.every;
      break;
    case 'linear':
      stages = ladder(base.start, base.step, base.max);
      every = base.every;
      break;
    case 'adaptive':
      stages = ladder(base.start, base.step, base.max);
      every = Math.max(1, Math.floor(steps / stages.length));
      break;
    default:
      throw new InvalidConfigError(
        'horizon.schedule',
        `the horizon experiment derives its variants from a stepwise, linear or adaptive horizon (short = first, long = last); got '${base.schedule}' — use one, or list experiment.variants`,
      );
  }
  const short = stages[0] as number;
  const long = stages[stages.length - 1] as number;
  if (short === long) throw new InvalidConfigError('horizon', `short and long horizons are both ${short}: the experiment needs at least two horizons`);
  const evalAt = evalHorizon ?? long;
  const stepwise: SingleHorizonConfig = { schedule: 'stepwise', horizons: stages, every, evalHorizon: evalAt };
  const adaptive: SingleHorizonConfig =
    base.schedule === 'adaptive'
      ? { ...base, evalHorizon: evalAt }
      : {
          schedule: 'adaptive',
          start: short,
          step: (stages[1] as number) - short,
          max: long,
          window: 3,
          cooldown: 3,
          successAbove: 0.7,
          truncationAbove: 0.8,
          patience: Math.max(2, Math.floor(every / 2)),
          minDelta: 0.02,
          evalHorizon: evalAt,
        };
  return [
    { name: `fixed-${short}`, horizon: { schedule: 'fixed', horizon: short, evalHorizon: evalAt } },
    { name: `fixed-${long}`, horizon: { schedule: 'fixed', horizon: long, evalHorizon: evalAt } },
    { name: 'stepwise', horizon: stepwise },
    { name: 'adaptive', horizon: adaptive },
  ];
}

/**
 * The experiment's variants: `experiment.variants` when given (each validated when its config is
 * parsed), else derived from the base horizon section.
 * @example variantsOf(config.horizon, { variants: { short: { schedule: 'fixed', horizon: 4 } } }, 30)
 */
export function variantsOf(base: HorizonConfig, section: ExperimentSection, steps: number): HorizonVariant[] {
  if (!section.variants) return deriveVariants(base, steps, section.evalHorizon);
  const entries = Object.entries(section.variants);
  if (entries.length === 0) throw new InvalidConfigError('experiment.variants', 'expected at least one variant');
  return entries.map(([name, horizon]) => ({
    name,
    horizon: { ...(section.evalHorizon ? { evalHorizon: section.evalHorizon } : {}), ...horizon } as SingleHorizonConfig,
  }));
}
