import { readFileSync } from 'node:fs';
import { ChatTemplate } from './src/models/chat/template.ts';
import { BoundedInterpreter } from './src/models/chat/bounded-render.ts';
const cfg = JSON.parse(readFileSync('test/models/chat/fixtures/qwen2.5/tokenizer_config.json', 'utf8'));
// count steps by patching
let steps = 0; const orig = BoundedInterpreter.prototype.evaluate;
BoundedInterpreter.prototype.evaluate = function (a: unknown, b: unknown) { steps++; return orig.call(this, a, b); };
const t = new ChatTemplate(cfg.chat_template, { specialTokens: { eos_token: '<|im_end|>' } });
const msgs = [{ role: 'system', content: 'You are an agent.' }];
for (let i = 0; i < 40; i++) { msgs.push({ role: 'user', content: 'Observation: you see a red ball to the left. '.repeat(10) }); msgs.push({ role: 'assistant', content: 'Thought: go. Action: turn left' }); }
const t0 = performance.now(); const out = t.render(msgs, { addGenerationPrompt: true }); const ms = performance.now() - t0;
console.log('qwen2.5 40 turns: steps', steps, 'chars', out.length, 'ms', ms.toFixed(1));
for (const [name, src] of [['range1e9', '{% for i in range(1000000000) %}x{% endfor %}'], ['nested1e5', '{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}'], ['doubling', "{% set ns = namespace(s='x') %}{% for i in range(64) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}"], ['empty', '']] as const) {
  const tt = new ChatTemplate(src, { origin: 'x/tokenizer_config.json:chat_template' });
  const a = performance.now();
  try { const r = tt.render(msgs); console.log(name, 'rendered', r.length); } catch (e) { console.log(name, (e as Error).message); }
  console.log(name, 'ms', (performance.now() - a).toFixed(0), 'rss MiB', Math.round(process.memoryUsage().rss / 2 ** 20), 'maxRSS MiB', Math.round(process.resourceUsage().maxRSS / 1024));
}
