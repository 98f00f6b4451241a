/**
 * What a running job tells its caller (CLI progress bar, tests, the UI later). Plain data.
 */
export type RunEvent =
  /** The run is set up; `message` says where it lives and which backend it uses. */
  | { readonly type: 'started'; readonly step: number; readonly message: string }
  /** A training step finished. */
  | { readonly type: 'step'; readonly step: number; readonly metrics: Readonly<Record<string, number>> }
  /** A held-out evaluation finished. */
  | {
      readonly type: 'eval';
      readonly step: number;
      readonly split: string;
      readonly successRate: number;
      readonly meanTurns: number;
      readonly episodes: number;
    }
  /** Anything else worth a line: checkpoints, horizon stage changes. */
  | { readonly type: 'info'; readonly message: string };
