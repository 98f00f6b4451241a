/**
 * The databases of the SQL environment: which vega-datasets file fills which table, with snake_case
 * column names and SQLite types, plus the words the question templates use for each table.
 */
import type { VegaRecord } from './vega.js';

/** A SQLite cell as the environment sees it. */
export type Cell = number | string | null;

/** One column: name, SQLite type, and how to read it from a source record. */
export interface ColumnDef {
  readonly name: string;
  readonly type: 'INTEGER' | 'REAL' | 'TEXT';
  /** Source field in the vega record. */
  readonly from: string;
  /** Words used in questions ("miles per gallon"); defaults to the name with spaces. */
  readonly phrase?: string;
  /** Optional conversion of the raw value (after type coercion). */
  readonly convert?: (raw: unknown) => Cell;
}

/** A table and the template vocabulary for it. */
export interface TableDef {
  readonly name: string;
  readonly file: string;
  readonly columns: readonly ColumnDef[];
  /** Plural noun for the rows ("cars"). */
  readonly entity: string;
  /** Column that names a row, for list and top-k questions (none: those families skip the table). */
  readonly label?: string;
  /** Columns with few distinct values, used in filters and GROUP BY. */
  readonly categorical: readonly string[];
  /** Numeric columns, used in aggregates, thresholds and ORDER BY. */
  readonly numeric: readonly string[];
  /** Extra indexed columns (join keys); categorical columns are always indexed. */
  readonly indexed?: readonly string[];
}

/** A database file: one or more tables. */
export interface DatabaseDef {
  readonly name: string;
  readonly tables: readonly TableDef[];
}

const MONTHS: Record<string, string> = { Jan: '01', Feb: '02', Mar: '03', Apr: '04', May: '05', Jun: '06', Jul: '07', Aug: '08', Sep: '09', Oct: '10', Nov: '11', Dec: '12' };

/** `Jun 12 1998` -> `1998-06-12` (the movies file's dates); anything else -> NULL. */
function isoDate(raw: unknown): Cell {
  const m = typeof raw === 'string' ? /^([A-Z][a-z]{2}) (\d{2}) (\d{4})$/.exec(raw) : null;
  const month = m ? MONTHS[m[1] as string] : undefined;
  return m && month ? `${m[3]}-${month}-${m[2]}` : null;
}

/** `1970-01-01` -> 1970 (the cars file stores the model year as a date). */
function yearOf(raw: unknown): Cell {
  const m = typeof raw === 'string' ? /^(\d{4})/.exec(raw) : null;
  return m ? Number(m[1]) : null;
}

/** The penguins file writes an unknown sex as `.`: store NULL. */
function knownSex(raw: unknown): Cell {
  return raw === 'MALE' || raw === 'FEMALE' ? raw : null;
}

const col = (name: string, type: ColumnDef['type'], from: string, extra: Partial<ColumnDef> = {}): ColumnDef => ({ name, type, from, ...extra });

/** The five databases (file `<name>.sqlite` each). */
export const DATABASES: readonly DatabaseDef[] = [
  {
    name: 'cars',
    tables: [
      {
        name: 'cars',
        file: 'cars.json',
        entity: 'cars',
        label: 'name',
        columns: [
          col('name', 'TEXT', 'Name'),
          col('miles_per_gallon', 'REAL', 'Miles_per_Gallon', { phrase: 'miles per gallon' }),
          col('cylinders', 'INTEGER', 'Cylinders'),
          col('displacement', 'REAL', 'Displacement'),
          col('horsepower', 'INTEGER', 'Horsepower'),
          col('weight_in_lbs', 'INTEGER', 'Weight_in_lbs', { phrase: 'weight in lbs' }),
          col('acceleration', 'REAL', 'Acceleration'),
          col('year', 'INTEGER', 'Year', { convert: yearOf }),
          col('origin', 'TEXT', 'Origin'),
        ],
        categorical: ['origin', 'cylinders', 'year'],
        numeric: ['horsepower', 'miles_per_gallon', 'weight_in_lbs', 'acceleration', 'displacement'],
      },
    ],
  },
  {
    name: 'movies',
    tables: [
      {
        name: 'movies',
        file: 'movies.json',
        entity: 'movies',
        label: 'title',
        columns: [
          col('title', 'TEXT', 'Title'),
          col('us_gross', 'INTEGER', 'US Gross', { phrase: 'US gross' }),
          col('worldwide_gross', 'INTEGER', 'Worldwide Gross', { phrase: 'worldwide gross' }),
          col('us_dvd_sales', 'INTEGER', 'US DVD Sales', { phrase: 'US DVD sales' }),
          col('production_budget', 'INTEGER', 'Production Budget', { phrase: 'production budget' }),
          col('release_date', 'TEXT', 'Release Date', { phrase: 'release date', convert: isoDate }),
          col('mpaa_rating', 'TEXT', 'MPAA Rating', { phrase: 'MPAA rating' }),
          col('running_time_min', 'INTEGER', 'Running Time min', { phrase: 'running time in minutes' }),
          col('distributor', 'TEXT', 'Distributor'),
          col('source', 'TEXT', 'Source'),
          col('major_genre', 'TEXT', 'Major Genre', { phrase: 'major genre' }),
          col('creative_type', 'TEXT', 'Creative Type', { phrase: 'creative type' }),
          col('director', 'TEXT', 'Director'),
          col('rotten_tomatoes_rating', 'INTEGER', 'Rotten Tomatoes Rating', { phrase: 'Rotten Tomatoes rating' }),
          col('imdb_rating', 'REAL', 'IMDB Rating', { phrase: 'IMDB rating' }),
          col('imdb_votes', 'INTEGER', 'IMDB Votes', { phrase: 'IMDB votes' }),
        ],
        categorical: ['mpaa_rating', 'major_genre', 'creative_type'],
        numeric: ['imdb_rating', 'rotten_tomatoes_rating', 'production_budget', 'worldwide_gross', 'running_time_min'],
      },
    ],
  },
  {
    name: 'penguins',
    tables: [
      {
        name: 'penguins',
        file: 'penguins.json',
        entity: 'penguins',
        columns: [
          col('species', 'TEXT', 'Species'),
          col('island', 'TEXT', 'Island'),
          col('beak_length_mm', 'REAL', 'Beak Length (mm)', { phrase: 'beak length in mm' }),
          col('beak_depth_mm', 'REAL', 'Beak Depth (mm)', { phrase: 'beak depth in mm' }),
          col('flipper_length_mm', 'INTEGER', 'Flipper Length (mm)', { phrase: 'flipper length in mm' }),
          col('body_mass_g', 'INTEGER', 'Body Mass (g)', { phrase: 'body mass in grams' }),
          col('sex', 'TEXT', 'Sex', { convert: knownSex }),
        ],
        categorical: ['species', 'island', 'sex'],
        numeric: ['body_mass_g', 'flipper_length_mm', 'beak_length_mm', 'beak_depth_mm'],
      },
    ],
  },
  {
    name: 'weather',
    tables: [
      {
        name: 'seattle_weather',
        file: 'seattle-weather.csv',
        entity: 'days',
        label: 'date',
        columns: [
          col('date', 'TEXT', 'date'),
          col('precipitation', 'REAL', 'precipitation'),
          col('temp_max', 'REAL', 'temp_max', { phrase: 'maximum temperature' }),
          col('temp_min', 'REAL', 'temp_min', { phrase: 'minimum temperature' }),
          col('wind', 'REAL', 'wind'),
          col('weather', 'TEXT', 'weather'),
        ],
        categorical: ['weather'],
        numeric: ['precipitation', 'temp_max', 'temp_min', 'wind'],
      },
    ],
  },
  {
    name: 'flights',
    tables: [
      {
        name: 'airports',
        file: 'airports.csv',
        entity: 'airports',
        label: 'name',
        columns: [
          col('iata', 'TEXT', 'iata', { phrase: 'IATA code' }),
          col('name', 'TEXT', 'name'),
          col('city', 'TEXT', 'city'),
          col('state', 'TEXT', 'state'),
          col('country', 'TEXT', 'country'),
          col('latitude', 'REAL', 'latitude'),
          col('longitude', 'REAL', 'longitude'),
        ],
        categorical: ['state'],
        numeric: ['latitude', 'longitude'],
        indexed: ['iata'],
      },
      {
        name: 'routes',
        file: 'flights-airport.csv',
        entity: 'routes',
        columns: [
          col('origin', 'TEXT', 'origin', { phrase: 'origin airport code' }),
          col('destination', 'TEXT', 'destination', { phrase: 'destination airport code' }),
          col('count', 'INTEGER', 'count', { phrase: 'number of flights' }),
        ],
        categorical: [],
        numeric: ['count'],
        indexed: ['origin', 'destination'],
      },
    ],
  },
];

/**
 * Converts a source value to a cell of the column's type: empty strings and non-numbers in numeric
 * columns become NULL.
 * @example cellOf(col('x', 'REAL', 'x'), { x: '2.5' }) // 2.5
 */
export function cellOf(column: ColumnDef, record: VegaRecord): Cell {
  const raw = record[column.from];
  if (column.convert) return column.convert(raw);
  if (raw === null || raw === undefined || raw === '') return null;
  if (column.type === 'TEXT') return String(raw);
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isFinite(n)) return null;
  return column.type === 'INTEGER' ? Math.round(n) : n;
}

/** `CREATE TABLE` text of a table, as shown to the agent. */
export function createTableSql(table: TableDef): string {
  return `CREATE TABLE ${table.name} (${table.columns.map((c) => `${c.name} ${c.type}`).join(', ')});`;
}

/** Looks up a database definition by name. */
export function databaseDef(name: string): DatabaseDef | undefined {
  return DATABASES.find((d) => d.name === name);
}

/** Question phrase of a column. */
export function phraseOf(table: TableDef, column: string): string {
  const def = table.columns.find((c) => c.name === column);
  return def?.phrase ?? column.replace(/_/g, ' ');
}
