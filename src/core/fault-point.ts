/**
 * Named fault points: moments in the product code where a fault test may kill (or freeze) the
 * process, so crash tests hit an exact moment instead of racing a timer.
 *
 * `TURNWISE_FAULT=<point>[@<n>][:<action>]` arms one point in this process: on the `n`-th time
 * (default 1) the code reaches `<point>`, it writes `turnwise fault point '<point>' reached (pid N)`
 * to stderr and then
 * - `kill` (default): sends itself SIGKILL — a kill -9 at that moment, nothing flushed or cleaned up;
 * - `stop`: sends itself SIGSTOP, so the test can act while the process is frozen there (kill -9
 *   nats-server, send SIGTERM) and resume it with SIGCONT. The line comes before the stop, so a
 *   test must wait until the process is stopped (state `T` in `/proc/<pid>/stat`) before it sends
 *   SIGCONT: one sent earlier is lost and the process then stays stopped for good.
 *
 * Unset (every normal run) a point costs one comparison. The points:
 *
 * | point | where |
 * |---|---|
 * | `checkpoint-latest-written` | `checkpoints/latest` is being replaced (`src/models/checkpoint.ts`) |
 * | `trajectories-stored` | a training step's trajectories are in the run store, not yet trained on (`src/runtime/train/step-effects.ts`) |
 * | `trajectory-stored` | the learner committed one trajectory of the stream to the run store, before acknowledging it (`src/runtime/nats/trajectory-stream.ts`) |
 * | `trajectory-published` | an episodes worker published a trajectory, before acknowledging its plan (`src/runtime/nats/episodes-worker.ts`) |
 * | `weights-publishing` | the NATS learner is about to publish a weights version (`src/runtime/nats/nats-train-run.ts`) |
 * | `engine-gradients-sent` | a model engine answered a forward_backward, its optim_step not sent yet (`src/engines/engine-trainer.ts`) |
 */

/** Every fault point the product code names. */
export const FAULT_POINTS = ['checkpoint-latest-written', 'trajectories-stored', 'trajectory-stored', 'trajectory-published', 'weights-publishing', 'engine-gradients-sent'] as const;
export type FaultPoint = (typeof FAULT_POINTS)[number];

interface ArmedFault {
  readonly point: FaultPoint;
  readonly at: number;
  readonly action: 'kill' | 'stop';
}

/**
 * Parses a `TURNWISE_FAULT` value; undefined or empty arms nothing.
 * @example parseFaultSpec('trajectory-stored@5:stop') // { point: 'trajectory-stored', at: 5, action: 'stop' }
 */
export function parseFaultSpec(spec: string | undefined): ArmedFault | null {
  if (spec === undefined || spec === '') return null;
  const m = /^([a-z-]+)(?:@([1-9]\d*))?(?::(kill|stop))?$/.exec(spec);
  if (m === null || !(FAULT_POINTS as readonly string[]).includes(m[1] as string)) {
    throw new Error(`TURNWISE_FAULT=${JSON.stringify(spec)}: expected <point>[@<n>][:kill|stop] with a point among ${FAULT_POINTS.join(', ')}`);
  }
  return { point: m[1] as FaultPoint, at: m[2] === undefined ? 1 : Number(m[2]), action: m[3] === 'stop' ? 'stop' : 'kill' };
}

let armed: ArmedFault | null | undefined;
let reached = 0;

/**
 * Marks a fault point; acts only when `TURNWISE_FAULT` names it (see the module comment).
 * @example faultPoint('checkpoint-latest-written');
 */
export function faultPoint(point: FaultPoint): void {
  if (armed === undefined) armed = parseFaultSpec(process.env.TURNWISE_FAULT);
  if (armed === null || armed.point !== point || ++reached !== armed.at) return;
  // Pipes and files take stderr synchronously on Linux, so the line is out before the signal lands.
  process.stderr.write(`turnwise fault point '${point}' reached (pid ${process.pid})\n`);
  process.kill(process.pid, armed.action === 'stop' ? 'SIGSTOP' : 'SIGKILL');
}
