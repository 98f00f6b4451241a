/**
 * The trajectory viewer: pick a run, split, step and outcome; list the episodes; open one to see
 * every turn: the environment's text, the action, its environment reward and shaped reward (the
 * process-reward hook's), policy version, staleness, token count and the loss mask over the action
 * tokens (trained tokens highlighted; the token the turn's reward is credited on is outlined; each
 * token's tooltip gives its log-prob and the entropy of the distribution it was drawn from).
 * Episodes are listed in natural id order (task 2 before task 10); the outcome filter offers the
 * outcomes the step's episodes ended with and says why a chosen one has none. Test and eval
 * episodes are never trained on: their loss mask shows what training would have used.
 */
import { api, type Episode, type RunSummary, type TurnView } from '../api';
import { naturalCompare } from '../../../format/natural-sort.js';
import { emptyOutcomeReason, type OutcomeCounts, outcomeOptions } from '../../../format/outcome-filter.js';
import { fmt, h, hashParams, outcomeBadge, setHashParams } from '../dom';

const SPLITS = ['train', 'test', 'eval'];

/** Only train-split episodes feed an update; test and eval episodes are held out. */
const isTrained = (split: string) => split === 'train';

/** The caption over a turn's action tokens. */
function maskCaption(turn: TurnView, split: string): string {
  if (!isTrained(split)) {
    return `action tokens (${split} episode: never trained on; highlighted: loss mask 1, the tokens an update would train on)`;
  }
  const credit = turn.creditToken === null ? ' — none here: every token was forced, so it moves to the previous turn' : '';
  return `action tokens (highlighted: loss mask 1, trained on; outlined: the turn's reward is credited there${credit})`;
}

function select(testid: string, options: [string, string][], value: string, onChange: (v: string) => void): HTMLSelectElement {
  const el = h('select', { 'data-testid': testid }, ...options.map(([v, label]) => h('option', { value: v, selected: v === value }, label)));
  el.addEventListener('change', () => onChange(el.value));
  return el;
}

function lossMask(turn: TurnView, split: string): HTMLElement {
  const trained = isTrained(split);
  return h(
    'div',
    { class: `tokens${trained ? '' : ' held-out'}`, 'data-testid': 'loss-mask' },
    ...turn.actionTokens.map((id, i) =>
      h(
        'span',
        {
          class: `${turn.lossMask[i] ? 'tok trained' : 'tok masked'}${trained && turn.creditToken === i ? ' credit' : ''}`,
          'data-credit': trained && turn.creditToken === i ? 'true' : null,
          title: `token ${id} · logprob ${fmt(turn.logprobs[i] ?? null)} · entropy ${fmt(turn.entropies?.[i] ?? null)} nats · loss mask ${turn.lossMask[i]}${turn.creditToken === i ? ' · the turn reward is credited here' : ''}`,
        },
        turn.actionPieces ? JSON.stringify(turn.actionPieces[i]).slice(1, -1) || '∅' : String(id),
      ),
    ),
  );
}

function turnCard(turn: TurnView, split: string): HTMLElement {
  return h(
    'section',
    { class: 'turn', 'data-testid': 'turn', 'data-turn': turn.index, 'data-policy-version': turn.policyVersion },
    h(
      'div',
      { class: 'turn-head' },
      h('strong', {}, `turn ${turn.index + 1}`),
      h('span', { class: 'kv' }, 'policy version ', h('b', { 'data-testid': 'policy-version' }, turn.policyVersion)),
      h('span', { class: 'kv' }, 'staleness ', h('b', {}, turn.staleness === null ? '—' : turn.staleness)),
      h('span', { class: 'kv' }, 'reward ', h('b', { 'data-testid': 'turn-reward' }, fmt(turn.reward))),
      turn.shapedReward === null ? null : h('span', { class: 'kv' }, 'shaped ', h('b', { 'data-testid': 'turn-shaped' }, fmt(turn.shapedReward))),
      h('span', { class: 'kv' }, 'tokens ', h('b', {}, `${turn.promptTokenCount} prompt + ${turn.actionTokens.length} action`)),
      turn.invalid ? h('span', { class: 'badge outcome-error' }, 'invalid action') : null,
    ),
    h('div', { class: 'label' }, 'observation'),
    h('pre', { class: 'obs' }, turn.observation),
    h('div', { class: 'label' }, 'action'),
    h('pre', { class: 'act' }, turn.action),
    h('div', { class: 'label', 'data-testid': 'mask-caption' }, maskCaption(turn, split)),
    lossMask(turn, split),
  );
}

export function renderTrajectories(root: HTMLElement): () => void {
  const p = hashParams();
  const state = { run: p.get('run') ?? '', split: p.get('split') ?? 'train', step: p.get('step') ?? '', outcome: p.get('outcome') ?? '', episode: p.get('episode') ?? '' };
  const controls = h('div', { class: 'controls' });
  const list = h('div', { class: 'episodes' });
  const detail = h('div', { class: 'detail', 'data-testid': 'episode-detail' });
  const status = h('p', { class: 'muted' });
  root.append(h('h1', {}, 'Trajectories'), controls, status, h('div', { class: 'split-pane' }, list, detail));
  let runs: RunSummary[] = [];
  const save = () => setHashParams('trajectories', state);

  const showEpisode = async (episode: Episode) => {
    state.episode = episode.id;
    save();
    for (const row of list.querySelectorAll('tr')) row.classList.toggle('current', row.getAttribute('data-episode') === episode.id);
    detail.replaceChildren(h('p', { class: 'muted' }, 'loading…'));
    const { turns } = await api.turns(state.run, episode.id, episode.step);
    const turnRewardSum = turns.reduce((a, t) => a + t.reward, 0);
    const shaped = turns.some((t) => t.shapedReward !== null) ? turns.reduce((a, t) => a + (t.shapedReward ?? 0), 0) : null;
    detail.replaceChildren(
      h(
        'div',
        { class: 'episode-head' },
        h('h2', {}, episode.id, ' ', outcomeBadge(episode.outcome)),
        h('p', { class: 'muted' }, `task ${episode.taskId} · step ${episode.step} · ${episode.split} · outcome reward ${fmt(episode.reward)} · Σ turn rewards ${fmt(turnRewardSum)}${shaped === null ? '' : ` · Σ shaped ${fmt(shaped)}`} · ${episode.turns} turns of horizon ${episode.horizon} · policy versions ${episode.policyVersionMin ?? '—'}–${episode.policyVersionMax ?? '—'}`),
        episode.error ? h('pre', { class: 'error' }, episode.error) : null,
      ),
      ...turns.map((t) => turnCard(t, episode.split)),
      h('div', { class: 'label' }, 'final observation'),
      h('pre', { class: 'obs' }, episode.finalObservation),
    );
  };

  const loadEpisodes = async () => {
    if (!state.run) return;
    const { steps } = await api.episodeSteps(state.run, state.split);
    if (!steps.some((s) => String(s.step) === state.step)) state.step = steps.length ? String(steps[steps.length - 1]?.step) : '';
    const counts: OutcomeCounts = steps.find((s) => String(s.step) === state.step) ?? { total: 0 };
    renderControls(
      steps.map((s) => [String(s.step), `step ${s.step} (${s.total}: ${s.success ?? 0} success)`]),
      outcomeOptions(counts, state.outcome).map((o) => [o.value, o.label]),
    );
    save();
    if (state.step === '') {
      list.replaceChildren(h('p', { class: 'muted' }, `no ${state.split} episodes in this run`));
      detail.replaceChildren();
      return;
    }
    const { episodes } = await api.episodes(state.run, { step: Number(state.step), split: state.split, outcome: state.outcome || undefined });
    episodes.sort((a, b) => naturalCompare(a.id, b.id));
    status.textContent = `${episodes.length} episode${episodes.length === 1 ? '' : 's'}`;
    const empty = emptyOutcomeReason(state.outcome, counts, state.split, state.step);
    if (empty !== null) {
      list.replaceChildren(h('p', { class: 'empty-note', 'data-testid': 'empty-outcome' }, empty));
      detail.replaceChildren();
      return;
    }
    list.replaceChildren(
      h(
        'table',
        { class: 'grid', 'data-testid': 'episode-table' },
        h('thead', {}, h('tr', {}, h('th', {}, 'episode'), h('th', {}, 'task'), h('th', {}, 'outcome'), h('th', {}, 'reward'), h('th', {}, 'turns'), h('th', {}, 'versions'))),
        h(
          'tbody',
          {},
          ...episodes.map((e) =>
            h(
              'tr',
              { 'data-testid': 'episode-row', 'data-episode': e.id, class: 'clickable', onclick: () => void showEpisode(e) },
              h('td', { class: 'episode-id' }, e.id),
              h('td', {}, e.taskId),
              h('td', {}, outcomeBadge(e.outcome)),
              h('td', { class: 'num' }, fmt(e.reward)),
              h('td', { class: 'num' }, `${e.turns}/${e.horizon}`),
              h('td', { class: 'num' }, `${e.policyVersionMin ?? '—'}–${e.policyVersionMax ?? '—'}`),
            ),
          ),
        ),
      ),
    );
    const current = episodes.find((e) => e.id === state.episode) ?? episodes[0];
    if (current) await showEpisode(current);
    else detail.replaceChildren();
  };

  const renderControls = (steps: [string, string][], outcomes: [string, string][]) => {
    controls.replaceChildren(
      h('label', {}, 'run ', select('pick-run', runs.map((r) => [r.id, r.id]), state.run, (v) => { state.run = v; state.episode = ''; void loadEpisodes(); })),
      h('label', {}, 'split ', select('pick-split', SPLITS.map((s) => [s, s]), state.split, (v) => { state.split = v; state.episode = ''; void loadEpisodes(); })),
      h('label', {}, 'step ', select('pick-step', steps, state.step, (v) => { state.step = v; state.episode = ''; void loadEpisodes(); })),
      h('label', {}, 'outcome ', select('pick-outcome', outcomes, state.outcome, (v) => { state.outcome = v; state.episode = ''; void loadEpisodes(); })),
    );
  };

  void (async () => {
    try {
      runs = (await api.runs()).runs.sort((a, b) => b.createdAt - a.createdAt);
      if (!state.run) state.run = runs[0]?.id ?? '';
      if (!p.get('split') && runs.find((r) => r.id === state.run)?.kind === 'eval') state.split = 'eval';
      renderControls([], [['', 'any']]);
      await loadEpisodes();
    } catch (error) {
      status.textContent = `cannot load trajectories: ${(error as Error).message}`;
    }
  })();
  return () => {};
}
