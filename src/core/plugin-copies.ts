/**
 * Plug-ins registered with another copy of turnwise in the same process.
 *
 * A TypeScript plug-in loaded with `node --import tsx --import ./plugins.ts …/cli/main.js` from a
 * package without `"type": "module"` is compiled to CommonJS, and its `import … from 'turnwise'`
 * then loads a second, CommonJS copy of the library with registries of its own. The command reads
 * the first copy's registries, so the plug-in's names look unknown although its registration
 * succeeded. Every copy therefore also notes its registrations in one list shared by the whole
 * process (on `globalThis`, under a `Symbol.for` key every copy spells the same way), and an
 * "unknown name" error can say where the name went and what to change.
 */

/** Key of the process-wide list; `Symbol.for` gives every copy of this module the same symbol. */
const REGISTRATIONS = Symbol.for('turnwise.plugin-registrations');
/** This copy of the module (a fresh symbol per evaluation of this file). */
const THIS_COPY = Symbol('turnwise copy');

interface Registration {
  readonly kind: string;
  readonly name: string;
  readonly copy: symbol;
}

function registrations(): Registration[] {
  const shared = globalThis as { [REGISTRATIONS]?: Registration[] };
  const list = shared[REGISTRATIONS] ?? [];
  shared[REGISTRATIONS] = list;
  return list;
}

/**
 * Notes that this copy of turnwise registered `name` as a plug-in of `kind`.
 * @example noteRegistration('advantageEstimator', 'median-baseline');
 */
export function noteRegistration(kind: string, name: string): void {
  registrations().push({ kind, name, copy: THIS_COPY });
}

/**
 * The end of an "unknown name" message when another copy of turnwise in this process registered
 * `name` as a `kind` (explaining why this copy cannot see it), else an empty string.
 * @example throw new Error(`unknown environment 'grid'${anotherCopyHint('environment', 'grid')}`);
 */
export function anotherCopyHint(kind: string, name: string): string {
  const elsewhere = registrations().some((r) => r.kind === kind && r.name === name && r.copy !== THIS_COPY);
  if (!elsewhere) return '';
  return (
    ` — '${name}' was registered with another copy of turnwise loaded in this process: a TypeScript plug-in in a package` +
    ' without "type": "module" is compiled to CommonJS and imports a CommonJS copy of turnwise whose registries this command' +
    ' never reads. Add "type": "module" to the package.json beside the plug-in (or name the file .mts)'
  );
}
