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
  /** A collapse alarm fired (`src/runtime/alarms/`); `consequence` says what the run does about it. */
  | {
      readonly type: 'alarm';
      readonly step: number;
      readonly name: string;
      readonly message: string;
      readonly action: 'warn' | 'stop' | 'lowerHorizon';
      readonly consequence: string;
    }
  /** Anything else worth a line: checkpoints, horizon stage changes. */
  | { readonly type: 'info'; readonly message: string };
