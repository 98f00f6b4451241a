/**
 * Chat templates render as transformers' `apply_chat_template` renders them (Jinja2 under Python),
 * construct by construct. Each template below was written for this test; each expected text (or
 * error) was recorded from transformers 5.18 (`render_jinja_template`) on the same messages and tools.
 */
import { describe, expect, it } from 'vitest';
import { ChatTemplateError } from '../../../src/models/chat/errors.js';
import { type ChatMessage, ChatTemplate, type TemplateTool } from '../../../src/models/chat/template.js';

const TOOLS = [{"type": "function", "function": {"name": "lookup", "description": "Look a word up.", "parameters": {"type": "object", "properties": {"word": {"type": "string", "description": "The word."}, "langs": {"type": "array", "items": {"type": "string", "enum": ["en", "fr"]}, "description": "Languages."}, "opts": {"type": "object", "properties": {"depth": {"type": "integer"}}, "description": "Options."}, "either": {"type": ["string", "null"], "description": "Maybe."}}, "required": ["word"]}}}] as unknown as TemplateTool[];

interface Case {
  readonly name: string;
  /** What Jinja2 does that the case pins. */
  readonly why: string;
  readonly template: string;
  readonly messages: readonly Record<string, unknown>[];
  readonly tools: boolean;
}

/** Renders: the text transformers 5.18 gives. */
const RENDERS: (Case & { readonly expected: string })[] = [
  {
    name: "python str() of values",
    why: "{{ x }} writes None, True, a dict's and a list's repr, as Jinja2 does",
    template: "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.arguments }}\n{% endfor %}[{{ m.content }}]{% endfor %}",
    messages: [{"role": "user", "content": "Define café."}, {"role": "assistant", "content": null, "tool_calls": [{"id": "call_000000001", "type": "function", "function": {"name": "lookup", "arguments": {"word": "café", "langs": ["en", "fr"], "opts": {"depth": 2}, "either": null, "exact": true, "score": 0.5}}}, {"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}],
    tools: false,
    expected: "[Define café.]{'word': 'café', 'langs': ['en', 'fr'], 'opts': {'depth': 2}, 'either': None, 'exact': True, 'score': 0.5}\n{'word': 'thé'}\n[None]",
  },
  {
    name: "str() through ~, string and join",
    why: "the ~ operator, the string filter and join write Python's str()",
    template: "{{ messages[0].tool_calls[0].function.arguments.exact ~ '|' ~ messages[0].content }}|{{ messages[0].tool_calls[0].function.arguments.opts | string }}|{{ [none, true, 2.5] | join(',') }}",
    messages: [{"role": "assistant", "content": null, "tool_calls": [{"id": "call_000000001", "type": "function", "function": {"name": "lookup", "arguments": {"word": "café", "langs": ["en", "fr"], "opts": {"depth": 2}, "either": null, "exact": true, "score": 0.5}}}, {"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}],
    tools: false,
    expected: "True|None|{'depth': 2}|None,True,2.5",
  },
  {
    name: "percent formatting",
    why: "'%s' | format(v) and the % operator format as Python's % does (pythonic tool calls)",
    template: "{% for c in messages[0].tool_calls %}{{ c.function.name }}({% for k, v in c.function.arguments | items %}{{ k }}={{ '%s' | format(v) }}{{ ', ' if not loop.last }}{% endfor %}){% endfor %}|{{ '%r/%d/%5.1f/%-4s|' % ('a', 7, 2.25, 'x') }}",
    messages: [{"role": "assistant", "content": null, "tool_calls": [{"id": "call_000000001", "type": "function", "function": {"name": "lookup", "arguments": {"word": "café", "langs": ["en", "fr"], "opts": {"depth": 2}, "either": null, "exact": true, "score": 0.5}}}, {"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}],
    tools: false,
    expected: "lookup(word=café, langs=['en', 'fr'], opts={'depth': 2}, either=None, exact=True, score=0.5)lookup(word=thé)|'a'/7/  2.2/x   |",
  },
  {
    name: "tojson as json.dumps",
    why: "tojson is Python's json.dumps: ', ' separators, non-ASCII kept, indent, sort_keys, ensure_ascii",
    template: "{{ tools[0].function.parameters.properties.langs | tojson }}\n{{ messages[0].tool_calls[0].function.arguments | tojson(indent=2, sort_keys=true) }}\n{{ 'café' | tojson(ensure_ascii=true) }}",
    messages: [{"role": "assistant", "content": null, "tool_calls": [{"id": "call_000000001", "type": "function", "function": {"name": "lookup", "arguments": {"word": "café", "langs": ["en", "fr"], "opts": {"depth": 2}, "either": null, "exact": true, "score": 0.5}}}, {"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}],
    tools: true,
    expected: "{\"type\": \"array\", \"items\": {\"type\": \"string\", \"enum\": [\"en\", \"fr\"]}, \"description\": \"Languages.\"}\n{\n  \"either\": null,\n  \"exact\": true,\n  \"langs\": [\n    \"en\",\n    \"fr\"\n  ],\n  \"opts\": {\n    \"depth\": 2\n  },\n  \"score\": 0.5,\n  \"word\": \"café\"\n}\n\"caf\\u00e9\"",
  },
  {
    name: "schema type names",
    why: "a dict lookup with an undefined key is undefined; `spec | items` then `.type` on a list is undefined; an undefined value is iterable",
    template: "{%- macro py(spec) -%}{%- set m = {'string': 'str', 'integer': 'int'} -%}{%- if m[spec.type] is defined -%}{{ m[spec.type] }}{%- elif spec.type == 'array' -%}list[{{ py(spec | items) }}]{%- elif spec.type is iterable and spec.type is not string -%}U[{%- for t in spec.type -%}{{ py({'type': t}) }}{{ ',' if not loop.last }}{%- endfor -%}]{%- else -%}Any{%- endif -%}{%- endmacro -%}{% for name, spec in tools[0].function.parameters.properties | items %}{{ name }}: {{ py(spec) }}\n{% endfor %}",
    messages: [],
    tools: true,
    expected: "word: str\nlangs: list[U[]]\nopts: Any\neither: U[str,Any]\n",
  },
  {
    name: "method before key",
    why: "d.items is the dict's method (callable), d['items'] its key",
    template: "{{ tools[0].function.parameters.properties.langs.items is callable }}|{{ tools[0].function.parameters.properties.langs['items'].enum | join('/') }}",
    messages: [],
    tools: true,
    expected: "True|en/fr",
  },
  {
    name: "per-iteration scope",
    why: "a set inside a for loop does not carry to the next iteration (Jinja2 scoping)",
    template: "{% set first = true %}{% for k in messages[0].tool_calls[0].function.arguments %}{% if not first %}, {% endif %}{{ k }}{% set first = false %}{% endfor %}|{{ first }}",
    messages: [{"role": "assistant", "content": null, "tool_calls": [{"id": "call_000000001", "type": "function", "function": {"name": "lookup", "arguments": {"word": "café", "langs": ["en", "fr"], "opts": {"depth": 2}, "either": null, "exact": true, "score": 0.5}}}, {"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}],
    tools: false,
    expected: "wordlangsoptseitherexactscore|True",
  },
  {
    name: "for over undefined and strings",
    why: "a for over an undefined value runs no iteration (else runs); over a string it yields characters",
    template: "{% for c in messages[0].tool_calls %}x{% else %}none{% endfor %}|{% for ch in 'ab' %}{{ ch }}.{% endfor %}",
    messages: [{"role": "user", "content": "Define café."}],
    tools: false,
    expected: "none|a.b.",
  },
  {
    name: "selectattr with tests",
    why: "selectattr/rejectattr take any test: 'undefined' selects messages without tool_calls",
    template: "{% for m in messages | rejectattr('role', 'equalto', 'tool') | selectattr('tool_calls', 'undefined') %}{{ m.role }};{% endfor %}|{{ messages | selectattr('name', 'defined') | map(attribute='name') | join(',') }}",
    messages: [{"role": "user", "content": "q"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}, {"role": "tool", "content": "tea", "tool_call_id": "call_000000002", "name": "lookup"}, {"role": "assistant", "content": "a"}],
    tools: false,
    expected: "user;assistant;|lookup",
  },
  {
    name: "tests with arguments",
    why: "tests take an argument with or without parentheses; a boolean is a number but not an integer; a dict is iterable",
    template: "{{ messages[0].tool_calls[0].function.arguments.exact is sameas true }}|{{ 9 is divisibleby 3 }}|{{ 10 is divisibleby(3) }}|{{ true is number }}|{{ true is integer }}|{{ messages[0] is iterable }}|{{ messages[0].role is eq 'assistant' }}",
    messages: [{"role": "assistant", "content": null, "tool_calls": [{"id": "call_000000001", "type": "function", "function": {"name": "lookup", "arguments": {"word": "café", "langs": ["en", "fr"], "opts": {"depth": 2}, "either": null, "exact": true, "score": 0.5}}}, {"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}],
    tools: false,
    expected: "True|True|False|True|False|True|True",
  },
  {
    name: "structural equality",
    why: "== compares dicts by value: two equal user messages both equal the last one",
    template: "{% for m in messages %}{{ m == messages[-1] }};{% endfor %}{{ '1' == 1 }}|{{ 1 == 1.0 }}|{{ none == undefined_name }}",
    messages: [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}, {"role": "user", "content": "hi"}],
    tools: false,
    expected: "True;False;True;False|True|False",
  },
  {
    name: "text filters on None",
    why: "text filters write None as 'None' (qwen2.5-coder-style `content | trim | length`); length of an undefined value is 0",
    template: "[{{ messages[0].content | trim }}]{{ messages[0].content | trim | length }}|{{ messages[0].missing | length }}|{{ messages[0].missing | trim }}|{{ 'x' | capitalize }}{{ 'aBC' | capitalize }}",
    messages: [{"role": "assistant", "content": null, "tool_calls": [{"id": "call_000000001", "type": "function", "function": {"name": "lookup", "arguments": {"word": "café", "langs": ["en", "fr"], "opts": {"depth": 2}, "either": null, "exact": true, "score": 0.5}}}, {"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}],
    tools: false,
    expected: "[None]4|0||XAbc",
  },
  {
    name: "numbers",
    why: "floor division, Python's modulo, float output, round half to even, min/max/sum",
    template: "{{ -7 // 2 }}|{{ -7 % 3 }}|{{ 7 / 2 }}|{{ 2.5 | round }}|{{ 2.675 | round(2) }}|{{ [3, 1, 2] | max }}{{ [3, 1, 2] | min }}{{ [3, 1, 2] | sum }}|{{ 1e-3 }}|{{ 'ab' * 2 }}",
    messages: [],
    tools: false,
    expected: "-4|2|3.5|2.0|2.67|316|0.001|abab",
  },
  {
    name: "Python string methods",
    why: "str methods with Python's arguments: strip(chars), split(sep, maxsplit), rsplit, startswith(tuple), format",
    template: "{{ messages[0].content.split('</think>', 1)[1].strip() }}|{{ 'xxhixx'.strip('x') }}|{{ 'a b  c'.split() }}|{{ 'a-b-c'.rsplit('-', 1) }}|{{ 'abc'.startswith(('x', 'ab')) }}|{{ '{}={name}'.format(1, name='n') }}",
    messages: [{"role": "assistant", "content": "<think>hmm</think>\n  Answer.  "}],
    tools: false,
    expected: "Answer.|hi|['a', 'b', 'c']|['a-b', 'c']|True|1=n",
  },
  {
    name: "tuples and trailing commas",
    why: "one-item tuples and trailing commas parse as in Jinja2",
    template: "{{ '%s' % (messages[0].role,) }}|{{ ('a',) }}|{{ [1, 2,] }}|{{ (1, 2,) | length }}",
    messages: [{"role": "user", "content": "x"}],
    tools: false,
    expected: "user|('a',)|[1, 2]|2",
  },
  {
    name: "lstrip_blocks and trim_blocks markers",
    why: "{%+ keeps the indentation before a block tag, +%} keeps the newline after it; \\r\\n reads as \\n",
    template: "a\r\n  {%+ if true +%}\r\n  b\r\n  {% endif %}\r\nc\r\n",
    messages: [],
    tools: false,
    expected: "a\n  \n  b\nc",
  },
  {
    name: "Jinja2 globals",
    why: "dict(), joiner() and cycler() exist as in Jinja2",
    template: "{{ dict(role='user', n=1) }}|{% set sep = joiner(' / ') %}{% for m in messages %}{{ sep() }}{{ m.role }}{% endfor %}|{% set c = cycler('odd', 'even') %}{% for m in messages %}{{ c.next() }};{% endfor %}",
    messages: [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}],
    tools: false,
    expected: "{'role': 'user', 'n': 1}|user / assistant / user|odd;even;odd;",
  },
  {
    name: "more filters",
    why: "truncate, batch, slice and attr as Jinja2 has them; a JSON -0.0 prints as Python's -0.0",
    template: "{{ messages[0].content | truncate(12) }}|{{ messages | batch(2) | map('length') | list }}|{{ [1, 2, 3, 4, 5] | slice(2) | list }}|{{ messages[0] | attr('role') }}|{{ messages[0].score }}",
    messages: [{"role": "user", "content": "a long message to cut", "score": -0.0}, {"role": "assistant", "content": "b"}, {"role": "user", "content": "c"}],
    tools: false,
    expected: "a long...|[2, 1]|[[1, 2, 3], [4, 5]]||-0.0",
  },
  {
    name: "macro scope",
    why: "a macro sees the variables where it is defined, not its caller's loop variable; a call block's caller() still works",
    template: "{% macro show() %}[{{ m }}]{% endmacro %}{% macro wrap() %}<{{ caller() }}>{% endmacro %}{% for m in messages %}{{ show() }}{% call wrap() %}{{ m.role }}{% endcall %}{% endfor %}",
    messages: [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}],
    tools: false,
    expected: "[]<user>[]<assistant>",
  },
  {
    name: "unknown string escapes",
    why: "an escape Python does not know keeps its backslash",
    template: "{{ '\\d+\\.' }}|{{ '\\x41\\101' }}",
    messages: [],
    tools: false,
    expected: "\\d+\\.|AA",
  },
];

/** Refusals: transformers 5.18 raises (its error in `python`); turnwise throws ChatTemplateError. */
const RAISES: (Case & { readonly python: string })[] = [
  {
    name: "undefined attribute",
    why: "reading an attribute of an undefined value fails (Jinja2 UndefinedError)",
    template: "{{ tools[0].function.parameters.additionalProperties.type }}",
    messages: [],
    tools: true,
    python: "UndefinedError: 'dict object' has no attribute 'additionalProperties'",
  },
  {
    name: "index of no message",
    why: "messages[-1]['role'] with no messages fails",
    template: "{{ messages[-1]['role'] }}",
    messages: [],
    tools: false,
    python: "UndefinedError: list object has no element -1",
  },
  {
    name: "str plus int",
    why: "'a' + 1 fails (TypeError) instead of writing 'a1'",
    template: "{{ messages[0].content + 1 }}",
    messages: [{"role": "user", "content": "a"}],
    tools: false,
    python: "TypeError: can only concatenate str (not \"int\") to str",
  },
  {
    name: "in on None",
    why: "'x' in None fails",
    template: "{{ 'x' in messages[0].content }}",
    messages: [{"role": "assistant", "content": null, "tool_calls": [{"id": "call_000000001", "type": "function", "function": {"name": "lookup", "arguments": {"word": "café", "langs": ["en", "fr"], "opts": {"depth": 2}, "either": null, "exact": true, "score": 0.5}}}, {"id": "call_000000002", "type": "function", "function": {"name": "lookup", "arguments": {"word": "thé"}}}]}],
    tools: false,
    python: "TypeError: argument of type 'NoneType' is not iterable",
  },
  {
    name: "alternation check",
    why: "a check built on selectattr('tool_calls', 'undefined') raises on two user turns",
    template: "{% for m in messages | selectattr('tool_calls', 'undefined') %}{% if (m.role == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('roles must alternate') }}{% endif %}{% endfor %}ok",
    messages: [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
    tools: false,
    python: "TemplateError: roles must alternate",
  },
];

const render = (c: Case) => new ChatTemplate(c.template).render(c.messages as unknown as ChatMessage[], c.tools ? { tools: TOOLS } : {});

describe('ChatTemplate renders as transformers 5.18 (Jinja2) does', () => {
  it.each(RENDERS.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(render(c), c.why).toBe(c.expected);
  });

  it.each(RAISES.map((c) => [c.name, c] as const))('refuses where transformers raises: %s', (_name, c) => {
    expect(() => render(c), c.why).toThrow(ChatTemplateError);
  });

  it("keeps a template's own raise_exception message", () => {
    const c = RAISES.find((x) => x.name === 'alternation check') as Case;
    expect(() => render(c)).toThrow('raised: roles must alternate');
  });
});
