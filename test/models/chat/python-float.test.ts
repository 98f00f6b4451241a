/**
 * JSON floats with an integral value (`3.0`, `1e2`) stay floats on their way into a template, as
 * Python's json.loads reads them: transformers writes them back as `3.0` and `100.0`.
 */
import { describe, expect, it } from 'vitest';
import { parseJsonKeepingFloats, PyFloat } from '../../../src/models/chat/python-float.js';
import { ChatTemplate } from '../../../src/models/chat/template.js';

describe('floats parsed from JSON, in a template', () => {
  it('keeps integral floats as PyFloat and every other number plain', () => {
    const value = parseJsonKeepingFloats('{"a": 3.0, "b": 3, "c": 1e2, "d": 0.5, "e": [-2.0, 7]}') as Record<string, unknown>;
    expect(value.a).toEqual(new PyFloat(3));
    expect(value.b).toBe(3);
    expect(value.c).toEqual(new PyFloat(100));
    expect(value.d).toBe(0.5);
    expect(value.e).toEqual([new PyFloat(-2), 7]);
    expect(JSON.stringify(value)).toBe('{"a":3,"b":3,"c":100,"d":0.5,"e":[-2,7]}');
  });

  it('renders them as Python writes floats (expected text from Python Jinja2 / transformers 5.18)', () => {
    const template = new ChatTemplate("{{ x.a }} {{ x.b }} {{ x.c }} {{ x.a + 1 }} {{ x | tojson }}");
    const x = parseJsonKeepingFloats('{"a": 3.0, "b": 3, "c": 1e2}');
    expect(template.render([], { kwargs: { x } })).toBe('3.0 3 100.0 4.0 {"a": 3.0, "b": 3, "c": 100.0}');
  });
});
