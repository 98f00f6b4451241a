/**
 * Step 1 of a training run: everything that exists before any actor starts — the tensor backend,
 * the environment and its train split, the run folder (fresh, or the one resumed with its latest
 * checkpoint), the models, and the run store with the run's row, resolved config and tokenizer
 * (and the live metrics export, when `train.export` asks for one).
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type Clock, systemClock } from '../../core/clock.js';
import type { ResolvedConfig } from '../../core/config.js';
import { writeFileAtomic } from '../../core/atomic-file.js';
import { CheckpointError, InvalidArgumentError, InvalidConfigError } from '../../core/errors.js';
import type { EnvironmentSpec, TaskCatalog } from '../../envs/environment.js';
import { getEnvironmentSpec } from '../../envs/registry.js';
import { type BackendInfo, selectBackend } from '../../backend/select.js';
import { type CheckpointContent, loadCheckpoint, resolveCheckpointDir } from '../../models/checkpoint.js';
import { RunStore } from '../../store/run-store.js';
import { LengthOutcomes } from '../length-outcomes.js';
import { asyncSettingsOf } from '../async/async-train.js';
import { restoreStaleness, type StalenessState } from '../async/staleness.js';
import { buildRunStack } from '../engine-stack.js';
import type { RunStack } from '../run-stack.js';
import type { RewardShaping } from '../../algorithms/reward-shapers.js';
import { RunAlarms, restorePersistedAlarms } from '../alarms/run-alarms.js';
import { type BaseModelIdentity, baseModelIdentity } from '../../models/hf/fingerprint.js';
import { rolloutShapingOf } from '../reward-shaping.js';
import type { RunEvent } from '../run-events.js';
import { type ClaimedRunFolder, newRunId, saveRunConfig } from '../run-folder.js';
import { startLiveExport } from './live-export.js';
import type { TrainRunOptions } from './types.js';

/** What the later steps of a run share: its folder, store, models and environment. */
export interface OpenedRun {
  readonly config: ResolvedConfig;
  readonly clock: Clock;
  readonly emit: (event: RunEvent) => void;
  /** Episodes ended by length, watched (a warning when most of a step's do). */
  readonly lengths: LengthOutcomes;
  readonly backend: BackendInfo;
  readonly spec: EnvironmentSpec;
  readonly settings: Record<string, unknown>;
  readonly catalog: TaskCatalog;
  /** Task indices of the train split. */
  readonly trainIndices: readonly number[];
  readonly resuming: boolean;
  readonly runDir: string;
  readonly runId: string;
  /** Completed steps when the run (re)starts. */
  readonly startStep: number;
  readonly checkpoint: CheckpointContent | null;
  readonly stack: RunStack;
  /** The asynchronous loop's staleness state saved with the checkpoint, checked. */
  readonly restoredStaleness: StalenessState;
  readonly store: RunStore;
  /** Stops the live metrics export (`train.export`), if any. */
  readonly stopExport: () => void;
  /** The process-reward hook (`reward.shaper`), spread into the rollout options. */
  readonly shaping: { readonly shaping?: RewardShaping };
  /** Collapse alarms, fed after every step (`src/runtime/alarms/`). */
  readonly alarms: RunAlarms;
  /** A pretrained run's base model (`model.from`) as opened, recorded in every checkpoint; null for turnwise's own model. */
  readonly baseModel: BaseModelIdentity | null;
  /** Aborted by a `stop` alarm: the run stops after the current phase, as on Ctrl-C. */
  readonly alarmStop: AbortController;
}

/** Refuses option combinations no assembly supports, before anything is loaded. */
export function checkTrainRunOptions(options: TrainRunOptions): void {
  const { config } = options;
  // The bus is chosen by how the run is started; a config asking for NATS without a server would silently run in-process.
  if (config.runtime.bus === 'nats' && !options.distributed) {
    throw new InvalidConfigError('runtime.bus', "'nats' needs a NATS server: start the run with --nats <url> (e.g. turnwise train config.yaml --nats nats://127.0.0.1:4222), or set runtime.bus: memory");
  }
  if (config.model.engine !== 'local' && options.distributed) {
    throw new InvalidConfigError('model.engine', `'${config.model.engine}' runs on the in-process bus for now: a Tinker server already spreads the model work; drop --nats`);
  }
  if (config.mode !== 'sync' && options.distributed) {
    throw InvalidArgumentError.format('mode', `'${config.mode}' runs on the in-process bus only for now (issue 9); use mode 'sync' with a distributed rollout`);
  }
}

/**
 * Opens (or reopens, when resuming) the run folder and builds the models; marks the run running.
 * @example const run = await openRun({ config }, await claimRunFolder({ config }, config.run)); … run.store.close();
 */
export async function openRun(options: TrainRunOptions, folder: ClaimedRunFolder): Promise<OpenedRun> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const emit = options.onEvent ?? (() => {});
  const backend = await selectBackend(config.model.backend, { matmul: config.model.matmul });
  const spec = getEnvironmentSpec(config.env.name);
  const shaping = rolloutShapingOf(config); // a bad reward.shaper fails here, before the run folder is written
  const settings = config.env.settings as Record<string, unknown>;
  const catalog = spec.catalog({ settings });
  const trainIndices = catalog.indices(config.env.trainSplit as 'train');

  const { runDir, resuming } = folder;
  let checkpointFallback: string | null = null;
  // A run killed before its first checkpoint starts over from step 0 (seeded, so the same run).
  const checkpointsWritten = resuming && (await readdir(join(runDir, 'checkpoints')).catch(() => [] as string[])).some((e) => e === 'latest' || e.startsWith('step-'));
  if (resuming && !checkpointsWritten) checkpointFallback = 'no checkpoint was written yet; starting the run over from step 0 with its stored config';
  const checkpoint = checkpointsWritten
    ? await loadCheckpoint(
        await resolveCheckpointDir(runDir, {
          onFallback: (message) => {
            checkpointFallback = message;
          },
        }),
      )
    : null;
  const stack = await buildRunStack(config, spec, checkpoint, options.engine);
  // After the stack: a resumed run's base was checked against its checkpoint's record there. (A
  // remote engine's weights are on the engine; the local folder gives only the tokenizer side.)
  const baseModel = config.model.from === null || config.model.engine !== 'local' ? null : await baseModelIdentity(config.model.from);
  // Checked before anything is written: a bad `state.async` fails the resume with the field named.
  const restoredStaleness = restoreStaleness(checkpoint?.state.async, stack.trainer.version, asyncSettingsOf(config).maxStaleness, runDir);
  const restoredAlarms = restorePersistedAlarms(checkpoint?.state.alarms, runDir);

  const store = RunStore.open(runDir);
  // A resumed run keeps its id (the store's one run; older folders used the sanitized name).
  const runId = resuming ? store.runId : (options.runId ?? newRunId(config.run.name));
  if (runId === null) throw new CheckpointError(runDir, 'run.db holds no run to resume');
  if (!resuming) {
    store.createRun({ id: runId, name: config.run.name, createdAt: Date.now(), config, backend: backend.name, seed: config.seed });
    await saveRunConfig(runDir, config);
    // The text side's files (tokenizer.json, tokenizer_config.json, ...): what viewers and workers read.
    for (const file of stack.text.files({ modelMaxLength: stack.maxContext, maxNewTokens: config.sampling.maxActionTokens })) {
      await writeFileAtomic(join(runDir, file.name), file.data);
    }
  }
  if (folder.lock.tookOverFrom !== null) {
    const w = folder.lock.tookOverFrom;
    const message = `took over the run folder from pid ${w.pid} on ${w.host} (${w.command} since ${w.since}), which is no longer running`;
    store.logEvent(checkpoint?.step ?? 0, 'run/takeover', message, w);
    emit({ type: 'info', message });
  }
  if (checkpointFallback !== null) {
    store.logEvent(checkpoint?.step ?? 0, 'checkpoint/fallback', checkpointFallback);
    emit({ type: 'info', message: `resume: ${checkpointFallback}` });
  }
  store.setRunStatus('running');
  const stopExport = startLiveExport(config, runDir, store);
  const startStep = checkpoint?.step ?? 0;
  const alarmStop = new AbortController();
  const alarms = new RunAlarms(
    config.alarms,
    {
      logEvent: (step, kind, message, data) => store.logEvent(step, kind, message, data),
      report: (alarm, consequence) => emit({ type: 'alarm', step: alarm.step, name: alarm.name, message: alarm.message, action: alarm.action, consequence }),
      stop: () => alarmStop.abort(),
    },
    restoredAlarms,
  );
  const lengths = new LengthOutcomes(config.model.maxContext);
  return { config, clock, emit, backend, spec, settings, catalog, trainIndices, resuming, runDir, runId, startStep, checkpoint, stack, restoredStaleness, store, shaping, alarms, alarmStop, stopExport, baseModel, lengths };
}
