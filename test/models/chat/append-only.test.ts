import { describe, expect, it } from 'vitest';
import { probeAppendOnly } from '../../../src/models/chat/append-only.js';
import { headMessages } from '../../../src/models/chat/layout.js';
import { ChatTemplate } from '../../../src/models/chat/template.js';

// Mistral v0.3's layout folds the system message into the LAST user turn (written here for the test).
const SYSTEM_IN_LAST_USER = [
  "{%- set system = messages[0].content if messages[0].role == 'system' else none %}",
  "{%- set loop_messages = messages[1:] if system is not none else messages %}",
  '{%- set ns = namespace(last_user=-1) %}',
  "{%- for m in loop_messages %}{%- if m.role == 'user' %}{%- set ns.last_user = loop.index0 %}{%- endif %}{%- endfor %}",
  '{{- bos_token }}',
  '{%- for m in loop_messages %}',
  "{%- if m.role == 'user' %}",
  "{%- if loop.index0 == ns.last_user and system is not none %}{{- '[INST] ' + system + '\\n\\n' + m.content + '[/INST]' }}",
  "{%- else %}{{- '[INST] ' + m.content + '[/INST]' }}{%- endif %}",
  "{%- else %}{{- ' ' + m.content + eos_token }}{%- endif %}",
  '{%- endfor %}',
].join('\n');

describe('probeAppendOnly', () => {
  const template = new ChatTemplate(SYSTEM_IN_LAST_USER, { specialTokens: { bos_token: '<s>', eos_token: '</s>' } });

  it('reports a template that moves the system message to the last user turn', () => {
    const report = probeAppendOnly(template, { system: 'Be brief.' });
    expect(report.appendOnly).toBe(false);
    // Every new user message takes the system text away from the previous one.
    expect(report.violations.map((v) => v.role)).toEqual(['user', 'user', 'user']);
    expect(report.violations[0].before.startsWith('Be brief.')).toBe(true);
  });

  it('finds the same template append-only when there is no system message', () => {
    expect(probeAppendOnly(template, {})).toEqual({ appendOnly: true, violations: [] });
  });

  it('lays out the head as AgentGym does, or with the instruction as the system message', () => {
    expect(headMessages({}, 'I', 'O').map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(headMessages({ acknowledgement: null }, 'I', 'O')).toEqual([{ role: 'user', content: 'I\n\nO' }]);
    expect(headMessages({ instructionRole: 'system', acknowledgement: null }, 'I', 'O')).toEqual([
      { role: 'system', content: 'I' },
      { role: 'user', content: 'O' },
    ]);
    expect(() => headMessages({ instructionRole: 'system', system: 'S' }, 'I', 'O')).toThrow(/layout\.system/);
  });
});
