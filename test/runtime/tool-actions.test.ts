import { describe, expect, it } from 'vitest';
import { InvalidConfigError } from '../../src/core/errors.js';
import type { ToolText, ToolTextResult } from '../../src/models/policy-text.js';
import { invalidToolStep, resolveActions, toolActionOf } from '../../src/runtime/tool-actions.js';
import { VAULT_TOOLS } from '../helpers/vault-env.js';

const toolText = { format: 'hermes' } as unknown as ToolText;
const takes = (): ToolTextResult => ({ ok: true, text: toolText });
const ignores = (): ToolTextResult => ({ ok: false, reason: 'the template ignores tools' });
const base = { constrained: true, envName: 'vault', envTools: VAULT_TOOLS };

describe('resolveActions (context.actions)', () => {
  it('auto: tools where the environment declares them and the policy takes them, else listed or text', () => {
    expect(resolveActions({ ...base, setting: 'auto', toolText: takes })).toEqual({ mode: 'tools', tools: VAULT_TOOLS, toolText });
    expect(resolveActions({ ...base, setting: 'auto', toolText: null })).toEqual({ mode: 'tools', tools: VAULT_TOOLS, toolText: null });
    expect(resolveActions({ ...base, setting: 'auto', toolText: ignores })).toEqual({ mode: 'listed' });
    expect(resolveActions({ ...base, constrained: false, setting: 'auto', toolText: ignores })).toEqual({ mode: 'text' });
    expect(resolveActions({ ...base, envTools: [], setting: 'auto', toolText: takes })).toEqual({ mode: 'listed' });
  });

  it('keeps an explicit listed or text, and refuses what cannot be had, naming context.actions and why', () => {
    expect(resolveActions({ ...base, setting: 'text', toolText: takes })).toEqual({ mode: 'text' });
    expect(resolveActions({ ...base, setting: 'listed', toolText: takes })).toEqual({ mode: 'listed' });
    const refused = (f: () => unknown) => {
      try {
        f();
      } catch (error) {
        return error as InvalidConfigError;
      }
      throw new Error('not refused');
    };
    const ignored = refused(() => resolveActions({ ...base, setting: 'tools', toolText: ignores }));
    expect(ignored).toBeInstanceOf(InvalidConfigError);
    expect(ignored.path).toBe('context.actions');
    expect(ignored.message).toMatch(/cannot be used with this model: the template ignores tools/);
    expect(refused(() => resolveActions({ ...base, envTools: [], setting: 'tools', toolText: takes })).message).toMatch(/vault declares none/);
    expect(refused(() => resolveActions({ ...base, constrained: false, setting: 'listed', toolText: takes })).message).toMatch(/sampling.constrained is false/);
  });
});

describe('toolActionOf', () => {
  it('sends exactly one valid call as its canonical text', () => {
    expect(toolActionOf({ kind: 'calls', content: 'hm', calls: [{ name: 'guess', arguments: { number: 3 } }] }, VAULT_TOOLS)).toEqual({ actionText: '{"name":"guess","arguments":{"number":3}}', error: null });
  });

  it('answers anything else with the error the agent is shown', () => {
    expect(toolActionOf({ kind: 'text', content: 'maybe 3' }, VAULT_TOOLS)).toEqual({ actionText: 'maybe 3', error: 'Your reply calls no tool. Call one of the tools: guess, hint.' });
    expect(toolActionOf({ kind: 'malformed', content: '', error: 'The tool call is not valid JSON (x).' }, VAULT_TOOLS).error).toBe('The tool call is not valid JSON (x). Call one of the tools: guess, hint.');
    const two = toolActionOf({ kind: 'calls', content: '', calls: [{ name: 'hint', arguments: {} }, { name: 'hint', arguments: {} }] }, VAULT_TOOLS);
    expect(two).toEqual({ actionText: '{"name":"hint","arguments":{}}\n{"name":"hint","arguments":{}}', error: 'Call one tool per turn; this reply makes 2 calls.' });
    expect(toolActionOf({ kind: 'calls', content: '', calls: [{ name: 'guess', arguments: { number: 'three' } }] }, VAULT_TOOLS).error).toBe('The argument "number" of "guess" must be of type integer, got string.');
    expect(invalidToolStep('no')).toEqual({ observation: { text: 'no' }, reward: 0, done: false, info: { invalid: true, toolCallError: true } });
  });
});
