/**
 * One part of `npm run bench -- scale` (issue #10). Each part measures its own figures and the
 * comparison the issue names, as rows of (figure, value); the driver prints them in one run.
 *
 * @example
 * const part: ScaleSection = { title: 'sampling', rows: [['batched / single', '12.3x']] };
 */
export interface ScaleSection {
  title: string;
  rows: Array<[figure: string, value: string]>;
  /** Short lines printed under the table: settings, machine load, caveats. */
  notes?: string[];
}

/** Options every part accepts: `quick` shortens the measurement (smoke runs). */
export interface ScaleOptions {
  quick: boolean;
}
