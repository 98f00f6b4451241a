/**
 * @huggingface/jinja's interpreter with Jinja2's Python semantics where chat templates meet them
 * (what transformers' `apply_chat_template` runs):
 *
 * - `{{ x }}` writes Python's `str(x)`: `None`, `True`, `{'a': 1}`, `412.5` (an undefined value: nothing);
 * - `d.name` prefers a method of the value's type, `d[k]` a key; either on an undefined value fails;
 * - `for` over an undefined value runs no iteration, over a string its characters;
 * - tests take arguments and answer as Jinja2's (`template-source.ts`, `python-tests.ts`);
 * - `==`, `in`, `<` compare as Python does; `+` of a string and a non-string fails; `~` writes `str()`;
 *   `%` on a string formats; `*` repeats a string or list;
 * - filters as `python-filters.ts` has them, the package's otherwise.
 */
import { Environment, Interpreter } from '@huggingface/jinja';
import { bool, dict, float, fn, type FunctionValue, int, tuple, isArray, isBoolean, isNumber, isString, type JinjaValue, list, type StringValue, str, undef } from './jinja-values.js';
import { pyFilter, pyIterate } from './python-filters.js';
import { pyPercentOperator } from './python-format.js';
import { pyGetattr, pyGetitem, UndefinedError } from './python-methods.js';
import { pyContains, pyTest } from './python-tests.js';
import { pyCompare, pyEquals, pyStr, pyTypeName } from './python-values.js';
import type { Node, TestNode } from './template-source.js';
import { TUPLE_CALLEE } from './template-tokens.js';

/** The package interpreter's methods turnwise overrides or calls (its .d.ts does not resolve under NodeNext). */
interface PackageInterpreter {
  run(program: unknown): JinjaValue;
  evaluate(statement: unknown, environment: unknown): JinjaValue;
  evaluateBlock(statements: Node[], environment: unknown): JinjaValue;
  evaluateMemberExpression(expr: Node, environment: unknown): JinjaValue;
  evaluateSliceExpression(object: JinjaValue, expr: Node, environment: unknown): JinjaValue;
  evaluateFor(node: Node, environment: unknown): JinjaValue;
  evaluateTestExpression(node: Node, environment: unknown): JinjaValue;
  evaluateBinaryExpression(node: Node, environment: unknown): JinjaValue;
  evaluateArguments(args: unknown, environment: unknown): [JinjaValue[], Map<string, JinjaValue>];
  evaluateCallExpression(expr: Node, environment: unknown): JinjaValue;
  evaluateMacro(node: Node, environment: unknown): JinjaValue;
  applyFilter(operand: JinjaValue, filter: Node, environment: unknown): JinjaValue;
}
const PackageInterpreterClass = Interpreter as unknown as new (env: Environment) => PackageInterpreter;

/** A scope: variables set in it shadow its parent's. */
interface Scope {
  readonly variables: Map<string, JinjaValue>;
  setVariable(name: string, value: JinjaValue): void;
  lookupVariable(name: string): JinjaValue;
}
const EnvironmentClass = Environment as unknown as new (parent?: unknown) => Scope;

/** The classes the package throws for `break` and `continue`, read off a throw. */
const CONTROL = (() => {
  const env = new Environment();
  const interpreter = new PackageInterpreterClass(env);
  const thrown = (type: string): new () => Error => {
    try {
      interpreter.evaluate({ type }, env);
    } catch (error) {
      return (error as Error).constructor as new () => Error;
    }
    throw new Error(`${type} did not throw`);
  };
  return { break: thrown('Break'), continue: thrown('Continue') };
})();

/** Binds a loop target (`x`, or `k, v` unpacked as Python unpacks). */
function assignTarget(scope: Scope, target: Node, value: JinjaValue): void {
  if (target.type === 'Identifier') {
    scope.setVariable(target.value as string, value);
    return;
  }
  const names = target.value as Node[];
  const parts = pyIterate(value);
  if (parts.length !== names.length) throw new Error(`ValueError: ${parts.length < names.length ? 'not enough' : 'too many'} values to unpack (expected ${names.length})`);
  names.forEach((name, i) => {
    assignTarget(scope, name, parts[i] as JinjaValue);
  });
}

/** Jinja2's `loop` variable for item `i`. */
function loopObject(items: readonly JinjaValue[], i: number): JinjaValue {
  const n = items.length;
  return dict(
    new Map<string, JinjaValue>([
      ['index', int(i + 1)],
      ['index0', int(i)],
      ['revindex', int(n - i)],
      ['revindex0', int(n - i - 1)],
      ['first', bool(i === 0)],
      ['last', bool(i === n - 1)],
      ['length', int(n)],
      ['depth', int(1)],
      ['depth0', int(0)],
      ['previtem', i > 0 ? (items[i - 1] as JinjaValue) : undef()],
      ['nextitem', i < n - 1 ? (items[i + 1] as JinjaValue) : undef()],
      ['cycle', fn((args) => args[i % Math.max(1, args.length)] ?? undef())],
    ]),
  );
}

// A node standing for a value already evaluated (handed back to the package's own evaluation).
const VALUE = 'TurnwiseValue';
const valueNode = (value: JinjaValue): Node => ({ type: VALUE, value });

// Statements whose result is not output (a `set`, a macro definition, a comment).
const SILENT = new Set(['Set', 'Macro', 'Comment']);

const numeric = (v: JinjaValue): v is JinjaValue & { value: number | boolean } => isNumber(v) || isBoolean(v);

/** Python's arithmetic on numbers (booleans count as 0 and 1). */
function arithmetic(op: string, a: JinjaValue, b: JinjaValue): JinjaValue {
  const x = Number(a.value);
  const y = Number(b.value);
  const floating = a.type === 'FloatValue' || b.type === 'FloatValue';
  const make = (n: number): JinjaValue => (floating ? float(n) : int(n));
  if ((op === '/' || op === '//' || op === '%') && y === 0) throw new Error('ZeroDivisionError: division by zero');
  switch (op) {
    case '+':
      return make(x + y);
    case '-':
      return make(x - y);
    case '*':
      return make(x * y);
    case '/':
      return float(x / y);
    case '//':
      return make(Math.floor(x / y));
    case '%':
      return make(x - y * Math.floor(x / y));
    default:
      return make(x ** y);
  }
}

/** Python's `+` and `*` on sequences, or null when Python would use another rule. */
function sequenceOp(op: string, a: JinjaValue, b: JinjaValue): JinjaValue | null {
  if (op === '+' && (isString(a) || isString(b))) {
    if (isString(a) && isString(b)) return str(a.value + b.value);
    throw new TypeError(`can only concatenate str (not "${pyTypeName(isString(a) ? b : a)}") to str`);
  }
  if (op === '+' && isArray(a) && isArray(b)) {
    if (a.type !== b.type) throw new TypeError(`can only concatenate ${pyTypeName(a)} (not "${pyTypeName(b)}") to ${pyTypeName(a)}`);
    return list([...a.value, ...b.value]);
  }
  if (op === '*') {
    const [seq, n] = numeric(b) ? [a, b] : [b, a];
    if (numeric(n) && n.type !== 'FloatValue' && (isString(seq) || isArray(seq))) {
      const times = Math.max(0, Number(n.value));
      return isString(seq) ? str(seq.value.repeat(times)) : list(Array.from({ length: times }, () => seq.value).flat());
    }
  }
  if (op === '%' && isString(a)) return str(pyPercentOperator(a.value, b));
  return null;
}

/**
 * The package's interpreter with Python's semantics (module comment).
 * @example new PythonInterpreter(env).run(parseTemplate(source)).value
 */
export class PythonInterpreter extends PackageInterpreterClass {
  override evaluate(statement: unknown, environment: unknown): JinjaValue {
    if ((statement as Node | null)?.type === VALUE) return (statement as Node).value as JinjaValue;
    return super.evaluate(statement, environment);
  }

  override evaluateCallExpression(expr: Node, environment: unknown): JinjaValue {
    if ((expr.callee as Node).value === TUPLE_CALLEE) return tuple(this.evaluateArguments(expr.args, environment)[0]);
    return super.evaluateCallExpression(expr, environment);
  }

  /** A macro sees the scope it was defined in (Jinja2), not its caller's loop variables; a call block's `caller` still reaches it. */
  override evaluateMacro(node: Node, environment: unknown): JinjaValue {
    const result = super.evaluateMacro(node, environment);
    const definedIn = environment as Scope;
    const name = (node.name as Node).value as string;
    const macro = definedIn.lookupVariable(name) as FunctionValue;
    definedIn.setVariable(
      name,
      fn((args, callScope) => {
        const scope = new EnvironmentClass(definedIn);
        const caller = (callScope as Scope | undefined)?.variables?.get('caller');
        if (caller !== undefined) scope.setVariable('caller', caller);
        return macro.value(args, scope);
      }),
    );
    return result;
  }

  override evaluateBlock(statements: Node[], environment: unknown): JinjaValue {
    let out = '';
    for (const statement of statements) {
      const value = this.evaluate(statement, environment);
      if (!SILENT.has(statement.type)) out += pyStr(value);
    }
    return str(out);
  }

  override evaluateMemberExpression(expr: Node, environment: unknown): JinjaValue {
    const object = this.evaluate(expr.object, environment);
    const property = expr.property as Node;
    if (expr.computed && property.type === 'SliceExpression') {
      if (object.type === 'UndefinedValue') throw new UndefinedError('cannot slice an undefined value');
      return super.evaluateSliceExpression(object, property, environment);
    }
    if (expr.computed) return pyGetitem(object, this.evaluate(property, environment));
    if (property.type === 'IntegerLiteral') return pyGetitem(object, int(property.value as number));
    return pyGetattr(object, property.value as string);
  }

  /** Jinja2's `for`: each iteration in a scope of its own (a `set` in one is gone in the next), `else` when nothing ran. */
  override evaluateFor(node: Node, environment: unknown): JinjaValue {
    const scope = new EnvironmentClass(environment);
    const iterable = node.iterable as Node;
    const select = iterable.type === 'SelectExpression';
    const all = pyIterate(this.evaluate(select ? iterable.lhs : iterable, scope));
    const target = node.loopvar as Node;
    const items = select
      ? all.filter((item) => {
          const s = new EnvironmentClass(scope);
          assignTarget(s, target, item);
          return this.evaluate(iterable.test, s).__bool__().value;
        })
      : all;
    let out = '';
    for (let i = 0; i < items.length; i++) {
      const iteration = new EnvironmentClass(scope);
      iteration.setVariable('loop', loopObject(items, i));
      assignTarget(iteration, target, items[i] as JinjaValue);
      try {
        out += (this.evaluateBlock(node.body as Node[], iteration) as StringValue).value;
      } catch (error) {
        if (error instanceof CONTROL.continue) continue;
        if (error instanceof CONTROL.break) break;
        throw error;
      }
    }
    if (items.length === 0) out += (this.evaluateBlock((node.defaultBlock ?? []) as Node[], scope) as StringValue).value;
    return str(out);
  }

  override evaluateTestExpression(node: Node, environment: unknown): JinjaValue {
    const test = node as TestNode;
    const operand = this.evaluate(test.operand, environment);
    const args = (test.testArgs ?? []).map((a) => this.evaluate(a, environment));
    const result = pyTest(test.test.value, operand, args);
    return bool(test.negate ? !result : result);
  }

  override evaluateBinaryExpression(node: Node, environment: unknown): JinjaValue {
    const op = (node.operator as { value: string }).value;
    if (op === 'and' || op === 'or') return super.evaluateBinaryExpression(node, environment);
    const left = this.evaluate(node.left, environment);
    const right = this.evaluate(node.right, environment);
    switch (op) {
      case '==':
        return bool(pyEquals(left, right));
      case '!=':
        return bool(!pyEquals(left, right));
      case '~':
        return str(pyStr(left) + pyStr(right));
      case 'in':
        return bool(pyContains(right, left));
      case 'not in':
        return bool(!pyContains(right, left));
      case '<':
        return bool(pyCompare(left, right, op) < 0);
      case '<=':
        return bool(pyCompare(left, right, op) <= 0);
      case '>':
        return bool(pyCompare(left, right, op) > 0);
      case '>=':
        return bool(pyCompare(left, right, op) >= 0);
    }
    if (left.type === 'UndefinedValue' || right.type === 'UndefinedValue') throw new UndefinedError(`cannot apply '${op}' to an undefined value`);
    const sequence = sequenceOp(op, left, right);
    if (sequence !== null) return sequence;
    if (numeric(left) && numeric(right) && ['+', '-', '*', '/', '//', '%', '**'].includes(op)) return arithmetic(op, left, right);
    if (['+', '-', '*', '/', '//', '%', '**'].includes(op)) throw new TypeError(`unsupported operand type(s) for ${op}: '${pyTypeName(left)}' and '${pyTypeName(right)}'`);
    return super.evaluateBinaryExpression({ ...node, left: valueNode(left), right: valueNode(right) }, environment);
  }

  override applyFilter(operand: JinjaValue, filter: Node, environment: unknown): JinjaValue {
    const call = filter.type === 'CallExpression';
    const name = ((call ? filter.callee : filter) as Node).value as string;
    const [args, kwargs] = call ? this.evaluateArguments(filter.args, environment) : [[], new Map<string, JinjaValue>()];
    return this.filter(name, operand, args, kwargs, environment);
  }

  private filter(name: string, value: JinjaValue, args: JinjaValue[], kwargs: Map<string, JinjaValue>, environment: unknown): JinjaValue {
    const ctx = { filter: (n: string, v: JinjaValue, a: JinjaValue[], k: Map<string, JinjaValue>) => this.filter(n, v, a, k, environment), getitem: pyGetitem };
    const out = pyFilter(name, value, args, kwargs, ctx);
    if (out !== undefined) return out;
    const argNodes: Node[] = [...args.map(valueNode), ...[...kwargs].map(([key, v]) => ({ type: 'KeywordArgumentExpression', key: { type: 'Identifier', value: key }, value: valueNode(v) }))];
    const node = argNodes.length === 0 ? { type: 'Identifier', value: name } : { type: 'CallExpression', callee: { type: 'Identifier', value: name }, args: argNodes };
    return super.applyFilter(value, node, environment);
  }
}
