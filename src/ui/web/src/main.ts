/** The dashboard's entry: a hash router over four views. */
import { renderCurves } from './views/curves';
import { renderEval } from './views/eval';
import { renderRuns } from './views/runs';
import { renderTrajectories } from './views/trajectories';

const VIEWS: Record<string, (root: HTMLElement) => () => void> = {
  runs: renderRuns,
  curves: renderCurves,
  trajectories: renderTrajectories,
  eval: renderEval,
};

let cleanup: (() => void) | null = null;

function route(): void {
  const name = location.hash.replace(/^#\/?/, '').split('?')[0] || 'runs';
  const view = VIEWS[name] ?? renderRuns;
  cleanup?.();
  const root = document.getElementById('app') as HTMLElement;
  root.replaceChildren();
  root.dataset.view = name;
  for (const a of document.querySelectorAll('nav a')) a.classList.toggle('active', a.getAttribute('data-nav') === name);
  cleanup = view(root);
}

window.addEventListener('hashchange', route);
route();
