/**
 * @huggingface/jinja's runtime values, typed. The package exports neither the value classes nor
 * usable types under NodeNext, so the classes are read off values it builds itself (a variable set
 * through `Environment.set`, a tuple literal evaluated), and the few members turnwise uses are
 * declared here.
 */
import { Environment, Interpreter } from '@huggingface/jinja';

/** A runtime value: `type` names its class (`StringValue`, `ObjectValue`, …). */
export interface JinjaValue {
  readonly type: string;
  readonly value: unknown;
  __bool__(): { value: boolean };
  readonly builtins: Map<string, JinjaValue>;
  toString(): string;
}
export interface StringValue extends JinjaValue {
  readonly type: 'StringValue';
  readonly value: string;
}
export interface NumberValue extends JinjaValue {
  readonly type: 'IntegerValue' | 'FloatValue';
  readonly value: number;
}
export interface BooleanValue extends JinjaValue {
  readonly type: 'BooleanValue';
  readonly value: boolean;
}
export interface ArrayValue extends JinjaValue {
  readonly type: 'ArrayValue' | 'TupleValue';
  readonly value: JinjaValue[];
}
export interface MapValue extends JinjaValue {
  readonly type: 'ObjectValue' | 'KeywordArgumentsValue' | 'NamespaceValue';
  readonly value: Map<string, JinjaValue>;
}
/** What a template function receives: positional values, keyword arguments last as a `KeywordArgumentsValue`. */
export type JinjaFunction = (args: JinjaValue[], scope: unknown) => JinjaValue;
export interface FunctionValue extends JinjaValue {
  readonly type: 'FunctionValue';
  readonly value: JinjaFunction;
}

type Ctor<V extends JinjaValue, A> = new (value: A) => V;

function classOf(value: unknown): unknown {
  const env = new Environment();
  env.set('v', value);
  return (env.lookupVariable('v') as object).constructor;
}

const tupleClass = (() => {
  const env = new Environment();
  const interpreter = new (Interpreter as unknown as new (env: Environment) => { evaluate(node: unknown, env: Environment): object })(env);
  return interpreter.evaluate({ type: 'TupleLiteral', value: [] }, env).constructor;
})();

/** The value classes, to build results of filters, tests and methods. */
export const V = {
  String: classOf('') as Ctor<StringValue, string>,
  Integer: classOf(1) as Ctor<NumberValue, number>,
  Float: classOf(1.5) as Ctor<NumberValue, number>,
  Boolean: classOf(true) as Ctor<BooleanValue, boolean>,
  Null: classOf(null) as Ctor<JinjaValue, undefined>,
  Undefined: classOf(undefined) as Ctor<JinjaValue, undefined>,
  Array: classOf([]) as Ctor<ArrayValue, JinjaValue[]>,
  Tuple: tupleClass as Ctor<ArrayValue, JinjaValue[]>,
  Object: classOf({}) as Ctor<MapValue, Map<string, JinjaValue>>,
  Function: classOf(() => 0) as Ctor<FunctionValue, JinjaFunction>,
};

export const str = (s: string): StringValue => new V.String(s);
export const int = (n: number): NumberValue => new V.Integer(n);
export const float = (n: number): NumberValue => new V.Float(n);
export const bool = (b: boolean): BooleanValue => new V.Boolean(b);
export const none = (): JinjaValue => new V.Null(undefined);
export const undef = (): JinjaValue => new V.Undefined(undefined);
export const list = (items: JinjaValue[]): ArrayValue => new V.Array(items);
export const tuple = (items: JinjaValue[]): ArrayValue => new V.Tuple(items);
export const dict = (entries: Map<string, JinjaValue>): MapValue => new V.Object(entries);
export const fn = (f: JinjaFunction): FunctionValue => new V.Function(f);

export const isString = (v: JinjaValue): v is StringValue => v.type === 'StringValue';
export const isNumber = (v: JinjaValue): v is NumberValue => v.type === 'IntegerValue' || v.type === 'FloatValue';
export const isBoolean = (v: JinjaValue): v is BooleanValue => v.type === 'BooleanValue';
export const isArray = (v: JinjaValue): v is ArrayValue => v.type === 'ArrayValue' || v.type === 'TupleValue';
/** A dict (the keyword-arguments value is one); a namespace is not. */
export const isDict = (v: JinjaValue): v is MapValue => v.type === 'ObjectValue' || v.type === 'KeywordArgumentsValue';
export const isNamespace = (v: JinjaValue): v is MapValue => v.type === 'NamespaceValue';
export const isNone = (v: JinjaValue): boolean => v.type === 'NullValue';
export const isUndefined = (v: JinjaValue): boolean => v.type === 'UndefinedValue';
export const isFunction = (v: JinjaValue): v is FunctionValue => v.type === 'FunctionValue';

/** Splits a call's arguments into positional values and keyword arguments. */
export function splitArgs(args: readonly JinjaValue[]): [JinjaValue[], Map<string, JinjaValue>] {
  const last = args.at(-1);
  if (last !== undefined && last.type === 'KeywordArgumentsValue') return [args.slice(0, -1), (last as MapValue).value];
  return [[...args], new Map()];
}
