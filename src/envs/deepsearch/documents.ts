/**
 * The local corpus of the deep-search environment, built from shipped facts: one document per
 * country (country-list-js: capital, continent, region, currency code, dialing code, ISO codes), per
 * first-level province of the 31 countries the package lists them for (US states carry their capital
 * from vega-datasets' `us-state-capitals.json`), and per US airport (vega-datasets `airports.csv`,
 * with the full state name so that the next hop is searchable).
 *
 * The country-list-js data files are read directly: the package's entry point adds enumerable
 * methods to `Array.prototype`, which we do not want in the process.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { readVegaTable } from '../sql/vega.js';

/** One searchable document with the facts it states. */
export interface SearchDocument {
  readonly id: number;
  readonly kind: 'country' | 'province' | 'airport';
  readonly title: string;
  readonly text: string;
  /** Facts stated in `text`, by relation (capital, continent, country, state, ...). */
  readonly facts: Readonly<Record<string, string>>;
}

const require = createRequire(import.meta.url);

function countryData<T>(file: string): Record<string, T> {
  const root = dirname(require.resolve('country-list-js/package.json'));
  return JSON.parse(readFileSync(join(root, 'data', file), 'utf8')) as Record<string, T>;
}

let cached: readonly SearchDocument[] | null = null;

/**
 * Every document, in a fixed order (countries by ISO code, then provinces, then airports).
 * @example searchDocuments().find((d) => d.title === 'France')?.facts.capital // 'Paris'
 */
export function searchDocuments(): readonly SearchDocument[] {
  if (cached !== null) return cached;
  const names = countryData<string>('names.json');
  const capitals = countryData<string>('capital.json');
  const continentOf = countryData<string>('continent.json');
  const continents = countryData<string>('continents.json');
  const regions = countryData<string>('regions.json');
  const currencies = countryData<string>('currency.json');
  const phones = countryData<string>('phone.json');
  const iso3 = countryData<string>('iso_alpha_3.json');
  const provinces = countryData<{ short: string | null; name: string }[]>('provinces.json');
  const stateCapitals = new Map(readVegaTable('us-state-capitals.json').map((r) => [String(r.state), String(r.city)]));

  const docs: SearchDocument[] = [];
  const add = (kind: SearchDocument['kind'], title: string, text: string, facts: Record<string, string>) => docs.push({ id: docs.length, kind, title, text, facts });
  for (const code of Object.keys(iso3).sort()) {
    const name = names[code];
    if (!name) continue;
    const facts: Record<string, string> = { name, iso2: code, iso3: iso3[code] ?? '' };
    const parts = [`${name} is a country`];
    const continent = continents[continentOf[code] ?? ''];
    const region = regions[code];
    if (continent) {
      facts.continent = continent;
      parts[0] += region && region !== continent ? ` in ${region}, on the continent of ${continent}.` : ` on the continent of ${continent}.`;
    } else parts[0] += '.';
    if (region) facts.region = region;
    if (capitals[code]) {
      facts.capital = capitals[code] as string;
      parts.push(`Its capital is ${capitals[code]}.`);
    }
    if (currencies[code]) {
      facts.currency = currencies[code] as string;
      parts.push(`Its currency code is ${currencies[code]}.`);
    }
    if (phones[code]) parts.push(`Its international dialing code is +${String(phones[code]).replace(/^\+/, '')}.`);
    parts.push(`Its ISO country codes are ${code} and ${iso3[code]}.`);
    add('country', name, parts.join(' '), facts);
  }
  const usStates = new Map<string, string>();
  for (const code of Object.keys(provinces).sort()) {
    const country = names[code];
    if (!country) continue;
    for (const p of provinces[code] ?? []) {
      if (code === 'US') {
        const capital = stateCapitals.get(p.name);
        if (p.short) usStates.set(p.short, p.name);
        const text = `${p.name}${p.short ? ` (${p.short})` : ''} is a state of ${country}.${capital ? ` Its capital is ${capital}.` : ''}`;
        add('province', p.name, text, { country, ...(capital ? { capital } : {}), ...(p.short ? { short: p.short } : {}) });
      } else add('province', p.name, `${p.name} is a province (first-level subdivision) of ${country}.`, { country });
    }
  }
  for (const r of readVegaTable('airports.csv')) {
    const state = usStates.get(String(r.state));
    if (state === undefined || !r.iata || !r.name) continue;
    const title = `${r.name} (${r.iata})`;
    add('airport', title, `${r.name} (${r.iata}) is an airport in ${r.city}, ${state} (${r.state}), United States.`, { iata: String(r.iata), city: String(r.city), state });
  }
  cached = docs;
  return docs;
}
