/**
 * Question templates of the deep-search environment, each answerable from the corpus by the searches
 * its category names (`hops1/...`: one search, `hops2/...`: two, the second on an entity read from
 * the first result). Values that are not unique in the corpus (a capital shared by two countries, a
 * province name that is also a country, a currency used by several countries) are left out, so that
 * every question has one answer; a question whose first search cannot reach its document in the
 * top 3 is left out too. Items are shuffled with a fixed seed and split (first 20%, at most
 * 500, are test); `deepsearch_<n>` is item `n`.
 */
import { Rng } from '../../core/rng.js';
import type { Split } from '../../core/types.js';
import { type SearchDocument, searchDocuments } from './documents.js';
import { searchCorpus } from './search-index.js';

/** The templates (task category = `hops<k>/<template>`). */
export const SEARCH_TEMPLATES = [
  'hops1/country_capital',
  'hops1/country_continent',
  'hops1/capital_continent',
  'hops1/currency_capital',
  'hops2/province_capital',
  'hops2/province_continent',
  'hops2/airport_state_capital',
] as const;
export type SearchTemplate = (typeof SEARCH_TEMPLATES)[number];

/** One question with its gold answers. */
export interface SearchQuestion {
  readonly index: number;
  readonly split: Split;
  readonly template: SearchTemplate;
  readonly question: string;
  readonly answers: readonly string[];
}

const SEED = 4_242;
let bank: { items: SearchQuestion[]; testSize: number } | null = null;

function counts(values: readonly (string | undefined)[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const v of values) if (v) m.set(v.toLowerCase(), (m.get(v.toLowerCase()) ?? 0) + 1);
  return m;
}

/**
 * Every question, shuffled and split (built once per process).
 * @example searchQuestions().items[0].question
 */
export function searchQuestions(): { readonly items: readonly SearchQuestion[]; readonly testSize: number } {
  if (bank !== null) return bank;
  const docs = searchDocuments();
  const countries = docs.filter((d) => d.kind === 'country');
  const provinces = docs.filter((d) => d.kind === 'province');
  const airports = docs.filter((d) => d.kind === 'airport');
  const titles = counts(docs.filter((d) => d.kind !== 'airport').map((d) => d.title));
  const capitals = counts(countries.map((d) => d.facts.capital));
  const currencies = counts(countries.map((d) => d.facts.currency));
  const byTitle = new Map(docs.map((d) => [d.title, d]));
  const unique = (v: string | undefined, m: Map<string, number>) => v !== undefined && m.get(v.toLowerCase()) === 1;

  const raw: Omit<SearchQuestion, 'index' | 'split'>[] = [];
  const q = (template: SearchTemplate, question: string, answer: string | undefined) => {
    if (answer) raw.push({ template, question, answers: [answer] });
  };
  for (const c of countries) {
    const { name, capital, continent, currency } = c.facts;
    if (!unique(name, titles)) continue;
    q('hops1/country_capital', `What is the capital of ${name}?`, capital);
    q('hops1/country_continent', `On which continent is ${name}?`, continent);
    // Kept only when a search for the capital finds the country in the top 3: many US airports are
    // named after cities (Athens, Paris), and BM25 then buries the country.
    const findable = capital !== undefined && searchCorpus(`${capital} capital`, 3).some((h) => h.doc === c);
    if (findable && unique(capital, capitals) && !titles.has((capital ?? '').toLowerCase())) q('hops1/capital_continent', `What is the continent of the country whose capital is ${capital}?`, continent);
    if (unique(currency, currencies)) q('hops1/currency_capital', `What is the capital of the country whose currency code is ${currency}?`, capital);
  }
  for (const p of provinces) {
    if (!unique(p.title, titles) || capitals.has(p.title.toLowerCase())) continue;
    const country = byTitle.get(p.facts.country ?? '') as SearchDocument | undefined;
    if (country === undefined || !unique(country.title, titles)) continue;
    q('hops2/province_capital', `What is the capital of the country that has the province ${p.title}?`, country.facts.capital);
    q('hops2/province_continent', `On which continent is the country that has the province ${p.title}?`, country.facts.continent);
  }
  const iataCounts = counts(airports.map((a) => a.facts.iata));
  for (const a of airports) {
    const state = byTitle.get(a.facts.state ?? '');
    if (!unique(a.facts.iata, iataCounts) || state === undefined || !unique(state.title, titles)) continue;
    q('hops2/airport_state_capital', `What is the capital of the US state where the airport with IATA code ${a.facts.iata} is located?`, state.facts.capital);
  }
  // Airports outnumber everything else: keep one in eight so that no template swamps the bank.
  const kept = raw.filter((item, i) => item.template !== 'hops2/airport_state_capital' || i % 8 === 0);
  Rng.fromSeed(SEED).fork('deepsearch/bank').shuffle(kept);
  const testSize = Math.min(500, Math.round(kept.length * 0.2));
  bank = { items: kept.map((item, index) => ({ ...item, index, split: index < testSize ? 'test' : 'train' })), testSize };
  return bank;
}
