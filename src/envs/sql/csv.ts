/**
 * A small RFC 4180 CSV reader (quoted fields, doubled quotes, commas and newlines inside quotes) for
 * the few CSV files of `vega-datasets`. Hand-written on purpose: the parser vega-datasets itself
 * uses (d3-dsv) is only a transitive dependency here, and these files need nothing more.
 */

/**
 * Parses CSV text with a header row into records of strings (empty fields stay `''`).
 * @example parseCsv('a,b\n1,"x, y"\n') // [{ a: '1', b: 'x, y' }]
 */
export function parseCsv(text: string): Record<string, string>[] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field.length === 0) quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field.length > 0 || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  const [header, ...body] = rows.filter((r) => !(r.length === 1 && r[0] === ''));
  if (header === undefined) return [];
  return body.map((r) => Object.fromEntries(header.map((h, j) => [h, r[j] ?? ''])));
}
