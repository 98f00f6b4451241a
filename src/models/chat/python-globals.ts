/**
 * The globals Jinja2 gives every template beside `range` and `namespace` (which the package has):
 * `dict(**kw)`, `joiner(sep)` and `cycler(*items)`.
 */
import { dict, fn, isDict, type JinjaValue, splitArgs, str } from './jinja-values.js';

/** `dict(mapping?, **kw)`: a new dict. */
const dictGlobal = fn((args) => {
  const [[from], kwargs] = splitArgs(args);
  return dict(new Map([...(from !== undefined && isDict(from) ? from.value : []), ...kwargs]));
});

/** `joiner(sep=', ')`: a function that returns '' the first time and `sep` after. */
const joinerGlobal = fn((args) => {
  const [[sep], kwargs] = splitArgs(args);
  const separator = sep ?? kwargs.get('sep') ?? str(', ');
  let used = false;
  return fn(() => {
    if (used) return separator;
    used = true;
    return str('');
  });
});

/** `cycler(*items)`: `next()` returns the items in turn, `current` the one next() returns next, `reset()` starts over. */
const cyclerGlobal = fn((args) => {
  const [items] = splitArgs(args);
  const state = new Map<string, JinjaValue>();
  let at = 0;
  const current = (): JinjaValue => items[at % Math.max(1, items.length)] ?? str('');
  state.set('current', current());
  state.set(
    'next',
    fn(() => {
      const value = current();
      at++;
      state.set('current', current());
      return value;
    }),
  );
  state.set(
    'reset',
    fn(() => {
      at = 0;
      state.set('current', current());
      return str('');
    }),
  );
  return dict(state);
});

/**
 * Jinja2's default globals the package lacks, by name.
 * @example for (const [name, value] of Object.entries(PYTHON_GLOBALS)) env.setVariable(name, value);
 */
export const PYTHON_GLOBALS: Readonly<Record<string, JinjaValue>> = { dict: dictGlobal, joiner: joinerGlobal, cycler: cyclerGlobal };
