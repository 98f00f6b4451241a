/**
 * Question templates of the SQL environment, one family per kind of query (the task category):
 * `count` (COUNT with one or two equality filters), `aggregate` (AVG/MAX/MIN/SUM, optionally
 * filtered), `filter` (list rows by an equality and a threshold), `group_by`, `top_k` (ORDER BY +
 * LIMIT, ties excluded) and `join` (routes joined to airports). Each question carries its gold
 * query and near-miss variants (the same template with one slot changed), which become the
 * distractors of the candidate list.
 */
import type { ResultSet } from './equivalence.js';
import { type Cell, type DatabaseDef, phraseOf, type TableDef } from './schema.js';

/** The template families (task categories). */
export const SQL_FAMILIES = ['count', 'aggregate', 'filter', 'group_by', 'top_k', 'join'] as const;
export type SqlFamily = (typeof SQL_FAMILIES)[number];

/** One generated question. */
export interface SqlQuestion {
  readonly db: string;
  readonly family: SqlFamily;
  readonly question: string;
  /** Gold query. */
  readonly sql: string;
  /** True when the gold has a top-level ORDER BY that the answer must follow. */
  readonly ordered: boolean;
  /** Near-miss queries, closest first. */
  readonly variants: readonly string[];
}

/** Runs a trusted (template-made) query. */
export type TrustedQuery = (db: string, sql: string) => ResultSet;

const AGGS = [
  { fn: 'AVG', word: 'average' },
  { fn: 'MAX', word: 'maximum' },
  { fn: 'MIN', word: 'minimum' },
  { fn: 'SUM', word: 'total' },
] as const;

/** SQL literal of a value (strings quoted, quotes doubled). */
export function sqlLiteral(v: Cell): string {
  if (v === null) return 'NULL';
  return typeof v === 'number' ? String(v) : `'${v.replace(/'/g, "''")}'`;
}

const others = <T>(items: readonly T[], v: T, n: number): T[] => {
  const at = items.indexOf(v);
  const out: T[] = [];
  for (let k = 1; k < items.length && out.length < n; k++) out.push(items[(at + k) % items.length] as T);
  return out;
};

function distinctValues(q: TrustedQuery, db: string, table: string, column: string): Cell[] {
  return q(db, `SELECT DISTINCT ${column} FROM ${table} WHERE ${column} IS NOT NULL ORDER BY ${column}`).rows.map((r) => r[0] as Cell);
}

const where = (conds: readonly string[]): string => (conds.length === 0 ? '' : ` WHERE ${conds.join(' AND ')}`);
const withPhrase = (t: TableDef, c: string, v: Cell): string => `${phraseOf(t, c)} ${sqlLiteral(v)}`;

function countQuestions(db: string, t: TableDef, values: Map<string, Cell[]>): SqlQuestion[] {
  const out: SqlQuestion[] = [];
  const sql = (conds: readonly string[]) => `SELECT COUNT(*) FROM ${t.name}${where(conds)}`;
  for (const c of t.categorical) {
    const vs = values.get(c) ?? [];
    for (const v of vs) {
      const cond = `${c} = ${sqlLiteral(v)}`;
      out.push({
        db,
        family: 'count',
        question: `How many ${t.entity} have ${withPhrase(t, c, v)}?`,
        sql: sql([cond]),
        ordered: false,
        variants: [...others(vs, v, 3).map((o) => sql([`${c} = ${sqlLiteral(o)}`])), sql([]), sql([`${c} != ${sqlLiteral(v)}`])],
      });
    }
  }
  for (let i = 0; i < t.categorical.length; i++) {
    for (let j = i + 1; j < t.categorical.length; j++) {
      const c1 = t.categorical[i] as string;
      const c2 = t.categorical[j] as string;
      const vs1 = values.get(c1) ?? [];
      const vs2 = values.get(c2) ?? [];
      for (const v1 of vs1) {
        for (const v2 of vs2) {
          const a = `${c1} = ${sqlLiteral(v1)}`;
          const b = `${c2} = ${sqlLiteral(v2)}`;
          out.push({
            db,
            family: 'count',
            question: `How many ${t.entity} have ${withPhrase(t, c1, v1)} and ${withPhrase(t, c2, v2)}?`,
            sql: sql([a, b]),
            ordered: false,
            variants: [
              ...others(vs2, v2, 2).map((o) => sql([a, `${c2} = ${sqlLiteral(o)}`])),
              ...others(vs1, v1, 2).map((o) => sql([`${c1} = ${sqlLiteral(o)}`, b])),
              sql([a]),
              sql([b]),
            ],
          });
        }
      }
    }
  }
  return out;
}

function aggregateQuestions(db: string, t: TableDef, values: Map<string, Cell[]>): SqlQuestion[] {
  const out: SqlQuestion[] = [];
  // Filters on the first categorical column only, so that aggregates do not swamp the bank.
  const filters: ({ c: string; v: Cell } | null)[] = [null];
  const firstCat = t.categorical[0];
  if (firstCat !== undefined) for (const v of values.get(firstCat) ?? []) filters.push({ c: firstCat, v });
  for (const n of t.numeric) {
    for (const agg of AGGS) {
      for (const f of filters) {
        const cond = f === null ? [] : [`${f.c} = ${sqlLiteral(f.v)}`];
        const sql = (fn: string, col: string, conds: readonly string[]) => `SELECT ${fn}(${col}) FROM ${t.name}${where(conds)}`;
        const variants = [
          ...AGGS.filter((a) => a !== agg).map((a) => sql(a.fn, n, cond)),
          ...others(t.numeric, n, 2).map((o) => sql(agg.fn, o, cond)),
          ...(f === null ? [] : [sql(agg.fn, n, []), ...others(values.get(f.c) ?? [], f.v, 2).map((o) => sql(agg.fn, n, [`${f.c} = ${sqlLiteral(o)}`]))]),
        ];
        out.push({
          db,
          family: 'aggregate',
          question: `What is the ${agg.word} ${phraseOf(t, n)} of ${t.entity}${f === null ? '' : ` with ${withPhrase(t, f.c, f.v)}`}?`,
          sql: sql(agg.fn, n, cond),
          ordered: false,
          variants,
        });
      }
    }
  }
  return out;
}

function filterQuestions(db: string, t: TableDef, values: Map<string, Cell[]>, q: TrustedQuery): SqlQuestion[] {
  const label = t.label;
  if (label === undefined) return [];
  const out: SqlQuestion[] = [];
  for (const c of t.categorical) {
    const vs = values.get(c) ?? [];
    for (const v of vs) {
      for (const n of t.numeric) {
        // Threshold: the 6th largest distinct value, so that 1 to 5 rows pass `> x`.
        const top = q(db, `SELECT DISTINCT ${n} FROM ${t.name} WHERE ${c} = ${sqlLiteral(v)} AND ${n} IS NOT NULL ORDER BY ${n} DESC LIMIT 6`).rows;
        if (top.length < 6) continue;
        const x = top[5]?.[0] as Cell;
        const sql = (conds: readonly string[]) => `SELECT ${label} FROM ${t.name}${where(conds)}`;
        const eq = `${c} = ${sqlLiteral(v)}`;
        out.push({
          db,
          family: 'filter',
          question: `List the ${phraseOf(t, label)} of the ${t.entity} with ${withPhrase(t, c, v)} and ${phraseOf(t, n)} greater than ${sqlLiteral(x)}.`,
          sql: sql([eq, `${n} > ${sqlLiteral(x)}`]),
          ordered: false,
          variants: [
            sql([eq, `${n} >= ${sqlLiteral(x)}`]),
            ...others(vs, v, 2).map((o) => sql([`${c} = ${sqlLiteral(o)}`, `${n} > ${sqlLiteral(x)}`])),
            sql([`${n} > ${sqlLiteral(x)}`]),
            sql([eq, `${n} < ${sqlLiteral(x)}`]),
          ],
        });
      }
    }
  }
  return out;
}

function groupByQuestions(db: string, t: TableDef): SqlQuestion[] {
  const out: SqlQuestion[] = [];
  const sql = (c: string, expr: string) => `SELECT ${c}, ${expr} FROM ${t.name} GROUP BY ${c}`;
  for (const c of t.categorical) {
    const otherCols = others(t.categorical, c, 2).filter((o) => o !== c);
    out.push({
      db,
      family: 'group_by',
      question: `For each ${phraseOf(t, c)}, how many ${t.entity} are there?`,
      sql: sql(c, 'COUNT(*)'),
      ordered: false,
      variants: [...otherCols.map((o) => sql(o, 'COUNT(*)')), ...t.numeric.slice(0, 2).map((n) => sql(c, `AVG(${n})`))],
    });
    for (const n of t.numeric) {
      for (const agg of AGGS.slice(0, 3)) {
        out.push({
          db,
          family: 'group_by',
          question: `For each ${phraseOf(t, c)}, what is the ${agg.word} ${phraseOf(t, n)} of the ${t.entity}?`,
          sql: sql(c, `${agg.fn}(${n})`),
          ordered: false,
          variants: [
            ...AGGS.filter((a) => a !== agg).map((a) => sql(c, `${a.fn}(${n})`)),
            ...others(t.numeric, n, 2).map((o) => sql(c, `${agg.fn}(${o})`)),
            ...otherCols.map((o) => sql(o, `${agg.fn}(${n})`)),
            sql(c, 'COUNT(*)'),
          ],
        });
      }
    }
  }
  return out;
}

function topKQuestions(db: string, t: TableDef, values: Map<string, Cell[]>, q: TrustedQuery): SqlQuestion[] {
  const label = t.label;
  if (label === undefined) return [];
  const out: SqlQuestion[] = [];
  const filters: ({ c: string; v: Cell } | null)[] = [null];
  const firstCat = t.categorical[0];
  if (firstCat !== undefined) for (const v of values.get(firstCat) ?? []) filters.push({ c: firstCat, v });
  for (const n of t.numeric) {
    for (const dir of ['DESC', 'ASC'] as const) {
      for (const k of [1, 3]) {
        for (const f of filters) {
          const conds = [...(f === null ? [] : [`${f.c} = ${sqlLiteral(f.v)}`]), `${n} IS NOT NULL`];
          // Ties at or above the cut would make the gold ambiguous: require k+1 distinct leading values.
          const lead = q(db, `SELECT ${n} FROM ${t.name}${where(conds)} ORDER BY ${n} ${dir} LIMIT ${k + 1}`).rows.map((r) => r[0]);
          if (lead.length < k + 1 || new Set(lead).size < k + 1) continue;
          const sql = (col: string, d: string, kk: number) => `SELECT ${label} FROM ${t.name}${where([...conds.slice(0, -1), `${col} IS NOT NULL`])} ORDER BY ${col} ${d} LIMIT ${kk}`;
          const word = dir === 'DESC' ? 'highest' : 'lowest';
          const scope = f === null ? t.entity : `${t.entity} with ${withPhrase(t, f.c, f.v)}`;
          const ask =
            k === 1
              ? `Among ${scope}, which one has the ${word} ${phraseOf(t, n)}? Give its ${phraseOf(t, label)}.`
              : `Among ${scope}, which ${k} have the ${word} ${phraseOf(t, n)}? List their ${phraseOf(t, label)}, ${word} first.`;
          out.push({
            db,
            family: 'top_k',
            question: ask,
            sql: sql(n, dir, k),
            ordered: k > 1,
            variants: [sql(n, dir === 'DESC' ? 'ASC' : 'DESC', k), sql(n, dir, k === 1 ? 3 : 1), ...others(t.numeric, n, 2).map((o) => sql(o, dir, k))],
          });
        }
      }
    }
  }
  return out;
}

function joinQuestions(db: string, q: TrustedQuery): SqlQuestion[] {
  const out: SqlQuestion[] = [];
  const from = (side: 'origin' | 'destination') => `FROM routes JOIN airports ON airports.iata = routes.${side}`;
  const states = q(db, `SELECT DISTINCT airports.state ${from('origin')} WHERE airports.state IS NOT NULL ORDER BY 1`).rows.map((r) => r[0] as Cell);
  for (const s of states) {
    const st = `airports.state = ${sqlLiteral(s)}`;
    const near = others(states, s, 2);
    out.push({
      db,
      family: 'join',
      question: `How many routes depart from airports in state ${sqlLiteral(s)}?`,
      sql: `SELECT COUNT(*) ${from('origin')} WHERE ${st}`,
      ordered: false,
      variants: [`SELECT COUNT(*) ${from('destination')} WHERE ${st}`, `SELECT SUM(routes.count) ${from('origin')} WHERE ${st}`, ...near.map((o) => `SELECT COUNT(*) ${from('origin')} WHERE airports.state = ${sqlLiteral(o)}`)],
    });
    out.push({
      db,
      family: 'join',
      question: `What is the total number of flights departing from airports in state ${sqlLiteral(s)}?`,
      sql: `SELECT SUM(routes.count) ${from('origin')} WHERE ${st}`,
      ordered: false,
      variants: [`SELECT COUNT(*) ${from('origin')} WHERE ${st}`, `SELECT SUM(routes.count) ${from('destination')} WHERE ${st}`, ...near.map((o) => `SELECT SUM(routes.count) ${from('origin')} WHERE airports.state = ${sqlLiteral(o)}`)],
    });
    const lead = q(db, `SELECT SUM(routes.count) ${from('origin')} WHERE ${st} GROUP BY airports.iata ORDER BY 1 DESC LIMIT 2`).rows.map((r) => r[0]);
    if (lead.length === 2 && lead[0] !== lead[1]) {
      const top = (side: 'origin' | 'destination', agg: string, dir: string) => `SELECT airports.name ${from(side)} WHERE ${st} GROUP BY airports.iata ORDER BY ${agg} ${dir} LIMIT 1`;
      out.push({
        db,
        family: 'join',
        question: `Which airport in state ${sqlLiteral(s)} has the most departing flights? Give its name.`,
        sql: top('origin', 'SUM(routes.count)', 'DESC'),
        ordered: false,
        variants: [top('origin', 'SUM(routes.count)', 'ASC'), top('destination', 'SUM(routes.count)', 'DESC'), top('origin', 'COUNT(*)', 'DESC')],
      });
    }
  }
  const dests = q(db, 'SELECT destination FROM routes GROUP BY destination HAVING COUNT(DISTINCT origin) BETWEEN 2 AND 8 ORDER BY 1').rows.map((r) => r[0] as Cell);
  for (const d of dests) {
    const list = (side: 'origin' | 'destination', other: 'origin' | 'destination', code: Cell) => `SELECT DISTINCT airports.name ${from(side)} WHERE routes.${other} = ${sqlLiteral(code)}`;
    out.push({
      db,
      family: 'join',
      question: `List the names of the airports that have a route to the airport with IATA code ${sqlLiteral(d)}.`,
      sql: list('origin', 'destination', d),
      ordered: false,
      variants: [list('destination', 'origin', d), ...others(dests, d, 2).map((o) => list('origin', 'destination', o))],
    });
  }
  return out;
}

/**
 * Every question of one database, in a fixed order (before validation).
 * @example generateQuestions(DATABASES[0], trusted).length > 100 // true
 */
export function generateQuestions(def: DatabaseDef, q: TrustedQuery): SqlQuestion[] {
  const out: SqlQuestion[] = [];
  for (const t of def.tables) {
    const values = new Map(t.categorical.map((c) => [c, distinctValues(q, def.name, t.name, c)]));
    if (def.name === 'flights' && t.name === 'airports') {
      // The airports table alone is a phone book: its questions come through the join family.
      continue;
    }
    if (t.categorical.length === 0) continue;
    out.push(...countQuestions(def.name, t, values), ...aggregateQuestions(def.name, t, values), ...filterQuestions(def.name, t, values, q));
    out.push(...groupByQuestions(def.name, t), ...topKQuestions(def.name, t, values, q));
  }
  if (def.name === 'flights') out.push(...joinQuestions(def.name, q));
  return out;
}
