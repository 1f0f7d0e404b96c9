import { startOpenAiFixture } from './fixtures/openai-server.js';
import { OpenAiCompatibleProvider } from '../plugins/models-langchain/src/lib/openai-provider.js';
const log: any = { debug(){}, info(){}, warn(o: any, m: any){ console.log('WARN', o, m) }, error(){}, child(){ return log } };
const fx = await startOpenAiFixture({ respond: (b) => {
  if (b.messages.at(-1).content === 'tool') return { tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris', days: 2 } }], usage: { prompt_tokens: 11, completion_tokens: 7 } };
  if (b.messages.at(-1).content === 'slow') return { delayMs: 1000, content: 'late' };
  if (b.messages.at(-1).content === 'err') return { status: 500 };
  if (b.messages.at(-1).content === '401') return { status: 401 };
  if (b.response_format) return { content: '{"answer":42}' };
  return { content: 'Hello there friend', chunkDelayMs: 50, usage: { prompt_tokens: 5, completion_tokens: 3 } };
} });
const p = new OpenAiCompatibleProvider({ baseUrl: fx.url, apiKey: () => 'sk-test', log });
const m = p.createChatModel({ model_name: 'gpt-4o-mini', temperature: null, timeoutMs: 300, options: {} });
const t0 = Date.now();
for await (const c of m.stream([{ role: 'user', content: 'hi' }])) console.log(Date.now() - t0, JSON.stringify(c));
console.log(JSON.stringify(await m.invoke([{ role: 'user', content: 'hi' }])));
const tools = [{ name: 'get_weather', description: 'w', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
for await (const c of m.stream([{ role: 'user', content: 'tool' }], { tools })) console.log(JSON.stringify(c));
console.log(JSON.stringify(await m.invoke([{ role: 'user', content: 'tool' }], { tools })));
console.log(JSON.stringify(await m.invoke([{ role: 'user', content: 'x' }], { responseSchema: { name: 'ans', schema: { type: 'object', properties: { answer: { type: 'number' } }, required: ['answer'], additionalProperties: false } } })));
for await (const c of m.stream([{ role: 'user', content: 'x' }], { responseSchema: { name: 'ans', schema: { type: 'object' } } })) console.log(JSON.stringify(c));
for (const q of ['slow', 'err', '401']) {
  try { await m.invoke([{ role: 'user', content: q }]); console.log('no error') } catch (e: any) { console.log(q, 'invoke', e.constructor.name, e.status, e.message) }
  try { for await (const c of m.stream([{ role: 'user', content: q }])) {} ; console.log('no error') } catch (e: any) { console.log(q, 'stream', e.constructor.name, e.status, e.message) }
}
const ac = new AbortController();
try { for await (const c of m.stream([{ role: 'user', content: 'hi' }], { signal: ac.signal })) { console.log('abort-chunk', JSON.stringify(c)); if (c.type === 'token' && c.content) ac.abort(); } console.log('ended without error') } catch (e: any) { console.log('abort', e.constructor.name, e.name, e.message) }
for (const r of fx.requests) console.log(JSON.stringify(r.body).slice(0, 400));
console.log(fx.requests[0]?.headers.authorization);
await fx.close();
