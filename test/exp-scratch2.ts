import { startOpenAiFixture } from './fixtures/openai-server.js';
import { OpenAiCompatibleProvider } from '../plugins/models-langchain/src/lib/openai-provider.js';
const log: any = { debug(){}, info(){}, warn(o: any, m: any){ console.log('WARN', o, m) }, error(){}, child(){ return log } };
const fx = await startOpenAiFixture({ respond: () => ({ content: 'a b c', chunkDelayMs: 400 }) });
const p = new OpenAiCompatibleProvider({ baseUrl: fx.url, apiKey: () => undefined, log });
const m = p.createChatModel({ model_name: 'gpt-4o-mini', temperature: 0.2, timeoutMs: 300, options: {} });
const t0 = Date.now();
try { for await (const c of m.stream([{ role: 'user', content: 'hi' }])) console.log(Date.now() - t0, JSON.stringify(c)); } catch (e: any) { console.log(Date.now() - t0, e.constructor.name, e.message) }
console.log(fx.requests[0]?.headers.authorization, JSON.stringify(fx.requests[0]?.body));
await fx.close();
