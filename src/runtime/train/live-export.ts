/**
 * `train.export: tensorboard`: every metric the run logs (rollout, training, evaluation; from any
 * assembly, in-process or NATS) is also appended to a TensorBoard event file next to run.db, so
 * `tensorboard --logdir runs` shows the curves while training runs. A resumed run starts a new
 * event file; TensorBoard reads every file of the folder.
 */
import type { ResolvedConfig } from '../../core/config.js';
import { TfEventWriter } from '../../store/export/tfevents-writer.js';
import type { RunStore } from '../../store/run-store.js';

/**
 * Starts the configured live export; returns the function that stops it (a no-op when none).
 * @example const stopExport = startLiveExport(config, runDir, store); … stopExport();
 */
export function startLiveExport(config: ResolvedConfig, runDir: string, store: RunStore): () => void {
  if (config.train.export !== 'tensorboard') return () => {};
  // Wall time is for TensorBoard's "relative" and "wall" axes only: the epoch clock, as the store's createdAt.
  const writer = TfEventWriter.create(runDir, Date.now() / 1000);
  const off = store.onMetrics((step, metrics) => writer.scalars(step, metrics, Date.now() / 1000));
  return () => {
    off();
    writer.close();
  };
}
