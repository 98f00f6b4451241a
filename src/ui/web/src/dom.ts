/** A tiny element builder: enough for tables and forms without a framework. */
import { formatValue } from '../../format/numbers.js';

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | ((event: Event) => void)>;

/** Creates an element; `on*` attributes that are functions become listeners. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === 'class') el.className = String(value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

/** Formats a metric value compactly (3 significant digits; integers exactly; tiny values as exponents). */
export function fmt(value: number | null | undefined, digits = 3): string {
  return formatValue(value, digits);
}

/** Text made safe to put inside HTML (ECharts tooltips are HTML strings). */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Offers `text` to the user as a file download named `fileName`. */
export function downloadText(fileName: string, text: string, type = 'text/csv'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = h('a', { href: url, download: fileName });
  document.body.append(link);
  link.click();
  link.remove();
  // Revoke after the click has been handled, so the download can still read the blob.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** Percent with one decimal. */
export const pct = (value: number | null | undefined): string => (value === null || value === undefined ? '—' : `${(value * 100).toFixed(1)}%`);

/** An outcome badge (`success|failure|truncated|error`). */
export function outcomeBadge(outcome: string): HTMLElement {
  return h('span', { class: `badge outcome-${outcome}`, 'data-outcome': outcome }, outcome);
}

/** Query parameters of the hash route (`#/view?a=1`). */
export function hashParams(): URLSearchParams {
  const hash = location.hash.replace(/^#/, '');
  const q = hash.indexOf('?');
  return new URLSearchParams(q < 0 ? '' : hash.slice(q + 1));
}

/** Replaces the hash's query without adding a history entry or re-rendering. */
export function setHashParams(view: string, params: Record<string, string | number | undefined>): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const query = q.toString();
  history.replaceState(null, '', `#/${view}${query ? `?${query}` : ''}`);
}
