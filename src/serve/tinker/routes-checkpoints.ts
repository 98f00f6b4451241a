/**
 * Training runs and checkpoints: `GET training_runs[/{id}]`, `GET training_runs/{id}/checkpoints`,
 * and a checkpoint's archive — `…/archive` answers 302 to `…/download` (with `Expires`, as SkyRL tx
 * and the SDK expect), which streams a gzip'd tar of the checkpoint's files (the PEFT
 * `adapter_config.json` and `adapter_model.safetensors`, plus the optimizer state of a training
 * checkpoint). The archive is written with `tar` (node-tar, npm's own tar implementation: gzip,
 * portable headers, no native code). A checkpoint is named by its id as the listing gives it
 * (`sampler_weights/<name>` or `weights/<name>`) or, as SkyRL tx does, by its bare name. `DELETE …/checkpoints/{id}`
 * removes one (204).
 */
import { readdir, rm } from 'node:fs/promises';
import type { Context, Hono } from 'hono';
import { create as createTar } from 'tar';
import { type CheckpointEntry, type CheckpointKind, checkpointExists, checkpointFolder, listCheckpoints } from '../../engines/local/checkpoint-files.js';
import { TINKER_API_PREFIX, tinkerPath } from '../../engines/tinker/wire.js';
import { TinkerHttpError } from './http.js';
import type { ModelRecord, TinkerState } from './state.js';

/** How long an archive link is announced as valid. */
const ARCHIVE_LINK_MS = 2 * 3600_000;

/**
 * Registers the run and checkpoint routes on `app`.
 * @example addCheckpointRoutes(app, state)
 */
export function addCheckpointRoutes(app: Hono, state: TinkerState): void {
  const api = (path: string) => `${TINKER_API_PREFIX}/${path}`;

  app.get(api('training_runs'), async (c) => {
    const limit = Math.max(1, Number(c.req.query('limit') ?? 20) || 20);
    const offset = Math.max(0, Number(c.req.query('offset') ?? 0) || 0);
    const all = [...state.models.values()];
    const page = await Promise.all(all.slice(offset, offset + limit).map((m) => trainingRun(state, m)));
    return c.json({ training_runs: page, cursor: { offset, limit, total_count: all.length } });
  });

  app.get(api('training_runs/:id'), async (c) => c.json(await trainingRun(state, modelOf(state, c.req.param('id') ?? ''))));

  app.get(api('training_runs/:id/checkpoints'), async (c) => {
    const m = modelOf(state, c.req.param('id') ?? '');
    return c.json({ checkpoints: (await listCheckpoints(state.base.checkpointsDir, m.id)).map(checkpointJson), cursor: null });
  });

  const archive = async (c: Context, kind: CheckpointKind | null) => {
    const { id, name } = c.req.param() as { id: string; name: string };
    await findCheckpoint(state, id, kind, name); // a 302 never points at nothing
    const download = new URL(c.req.url);
    download.pathname = download.pathname.replace(/\/archive$/, '/download');
    c.header('Expires', new Date(state.now() + ARCHIVE_LINK_MS).toUTCString());
    c.header('Location', download.toString());
    return c.body(null, 302);
  };
  const download = async (c: Context, kind: CheckpointKind | null) => {
    const { id, name } = c.req.param() as { id: string; name: string };
    const found = await findCheckpoint(state, id, kind, name);
    const folder = checkpointFolder(state.base.checkpointsDir, id, found, name);
    const files = (await readdir(folder)).filter((f) => !f.startsWith('.')).sort();
    const chunks: Uint8Array[] = [];
    for await (const chunk of createTar({ gzip: true, cwd: folder, portable: true }, files)) chunks.push(chunk as Uint8Array);
    const bytes = Buffer.concat(chunks);
    return c.body(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer, 200, {
      'content-type': 'application/octet-stream',
      'content-disposition': `attachment; filename="${id}-${name}.tar.gz"`,
    });
  };
  const remove = async (c: Context, kind: CheckpointKind | null) => {
    const { id, name } = c.req.param() as { id: string; name: string };
    const found = await findCheckpoint(state, id, kind, name);
    state.base.forgetSampler(id, name);
    await rm(checkpointFolder(state.base.checkpointsDir, id, found, name), { recursive: true, force: true });
    return c.body(null, 204);
  };
  app.delete(api('training_runs/:id/checkpoints/:name'), (c) => remove(c, null));
  app.get(api('training_runs/:id/checkpoints/:name/archive'), (c) => archive(c, null));
  app.get(api('training_runs/:id/checkpoints/:name/download'), (c) => download(c, null));
  for (const [segment, kind] of [
    ['sampler_weights', 'sampler'],
    ['weights', 'training'],
  ] as const) {
    app.get(api(`training_runs/:id/checkpoints/${segment}/:name/archive`), (c) => archive(c, kind));
    app.get(api(`training_runs/:id/checkpoints/${segment}/:name/download`), (c) => download(c, kind));
    app.delete(api(`training_runs/:id/checkpoints/${segment}/:name`), (c) => remove(c, kind));
  }
}

function modelOf(state: TinkerState, id: string): ModelRecord {
  const m = state.models.get(id);
  if (m === undefined) throw new TinkerHttpError(404, 'Training run not found');
  return m;
}

/** The kind of an existing checkpoint (`kind` null: sampler first, as a bare name means in SkyRL tx), or a 404. */
async function findCheckpoint(state: TinkerState, id: string, kind: CheckpointKind | null, name: string): Promise<CheckpointKind> {
  modelOf(state, id);
  for (const k of kind === null ? (['sampler', 'training'] as const) : [kind]) {
    if (/^[A-Za-z0-9_][A-Za-z0-9_.-]*$/.test(name) && (await checkpointExists(state.base.checkpointsDir, id, k, name))) return k;
  }
  throw new TinkerHttpError(404, 'Checkpoint not found');
}

function checkpointJson(e: CheckpointEntry) {
  const path = tinkerPath({ modelId: e.modelId, kind: e.kind, name: e.name });
  return { checkpoint_id: path.slice(`tinker://${e.modelId}/`.length), checkpoint_type: e.kind, time: e.time.toISOString(), tinker_path: path, size_bytes: e.sizeBytes, public: false, expires_at: null };
}

async function trainingRun(state: TinkerState, m: ModelRecord) {
  const checkpoints = await listCheckpoints(state.base.checkpointsDir, m.id);
  const latest = (kind: CheckpointKind) => {
    const e = checkpoints.find((x) => x.kind === kind);
    return e === undefined ? null : checkpointJson(e);
  };
  const metadata = m.userMetadata === null ? null : Object.fromEntries(Object.entries(m.userMetadata).map(([k, v]) => [k, String(v)]));
  return {
    training_run_id: m.id,
    base_model: state.base.name,
    model_owner: 'default',
    is_lora: true,
    corrupted: false,
    lora_rank: m.rank,
    last_request_time: m.lastRequestTime.toISOString(),
    last_checkpoint: latest('training'),
    last_sampler_checkpoint: latest('sampler'),
    user_metadata: metadata,
  };
}
