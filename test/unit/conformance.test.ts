// The conformance suites of @agent-host/sdk/testing: every first-party orchestrator, embedder, local document parser
// and the local object store keep every rule of their suite (the chroma retriever, the openai embedder, the s3 store
// and the MCP tool backends run theirs in test/integration), and a fake that breaks one rule fails that rule, named,
// and no other.
import {
  extensionPoints,
  type DocumentInput,
  type DocumentParser,
  type DocumentRecognizer,
  type EtlRuntime,
  type FusionRuntime,
  type ModelProvider,
  type SkillBackend,
  type ToolBackend,
  type ToolProvider,
  type ToolHandle,
  type Embedder,
  type Orchestrator,
  type Retriever,
  type TurnEvent,
  type TurnResult,
  type VectorFilter,
  type VectorPoint,
} from '@agent-host/sdk';
import {
  ConformanceError,
  documentParserConformance,
  documentRecognizerConformance,
  embedderConformance,
  etlRuntimeConformance,
  fakeTurnContext,
  fusionRuntimeConformance,
  modelProviderConformance,
  objectStoreConformance,
  orchestratorConformance,
  retrieverConformance,
  scriptedModel,
  skillBackendConformance,
  toolBackendConformance,
  toolProviderConformance,
  type ConformanceRule,
} from '@agent-host/sdk/testing';
import { Document, Packer, Paragraph } from 'docx';
import PDFDocument from 'pdfkit';
import t from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Kernel } from '@agent-host/core';
import { createLocalObjectStore } from '../../core/src/services/object-store-local.js';
import { contributesOf, loadFirstPartyPlugin } from '../helpers/first-party-plugin.js';

type Tap = typeof t;

const sharedKernels = new Map<string, Promise<Kernel>>();
/** One kernel for every test here that uses plugin `id` with its default config: its pool of worker threads starts once. */
function sharedPlugin(id: string): Promise<Kernel> {
  let kernel = sharedKernels.get(id);
  if (!kernel) {
    const loading = loadFirstPartyPlugin(id);
    t.teardown(async () => (await loading).stop());
    sharedKernels.set(id, (kernel = loading));
  }
  return kernel;
}

/** Runs each rule as a subtest that passes when the rule holds. */
async function conforms(t: Tap, rules: ConformanceRule[]) {
  for (const rule of rules) await t.test(rule.rule, async () => rule.check());
}

/** The rules `rules` breaks, with their messages. */
async function broken(rules: ConformanceRule[]): Promise<{ rule: string; message: string }[]> {
  const out: { rule: string; message: string }[] = [];
  for (const rule of rules) {
    const error = await rule.check().then(
      () => undefined,
      (e: unknown) => e,
    );
    if (error instanceof ConformanceError) out.push({ rule: error.rule, message: error.message });
    else if (error !== undefined) throw error;
  }
  return out;
}

const text = (s: string) => new TextEncoder().encode(s);

async function pdf(line: string): Promise<Uint8Array> {
  const doc = new PDFDocument();
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => doc.on('end', resolve));
  doc.text(line);
  doc.end();
  await ended;
  return new Uint8Array(Buffer.concat(chunks));
}

const PHRASE = 'Parcels ship within two days';
const SAMPLES: Record<string, () => Promise<Uint8Array>> = {
  'text/plain': async () => text(`${PHRASE}.\n\nRefunds go to the original card.`),
  'text/markdown': async () => text(`# Shipping\n\n${PHRASE}.`),
  'text/x-markdown': async () => text(`# Shipping\n\n${PHRASE}.`),
  'text/html': async () => text(`<html><body><h1>Shipping</h1><p>${PHRASE}.</p></body></html>`),
  'text/csv': async () => text(`topic,answer\nshipping,${PHRASE}\n`),
  'application/pdf': () => pdf(`${PHRASE}.`),
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': async () =>
    new Uint8Array(await Packer.toBuffer(new Document({ sections: [{ children: [new Paragraph(`${PHRASE}.`)] }] }))),
};

t.test('the embedders plugin: feature-hashing keeps every embedder rule', async (t) => {
  const kernel = await loadFirstPartyPlugin('embedders');
  await conforms(t, embedderConformance(kernel.registry(extensionPoints.embedders).get('feature-hashing')!));
});

t.test('the parsers-local plugin: the parser of each content type it contributes keeps every parser rule', async (t) => {
  const parsers = (await sharedPlugin('parsers-local')).registry(extensionPoints.documentParsers);
  const contentTypes = (await contributesOf('parsers-local')).documentParsers!;
  t.same(
    contentTypes.filter((type) => !SAMPLES[type]),
    [],
    'a sample for every content type',
  );
  for (const contentType of contentTypes) {
    await t.test(contentType, async (t) => {
      const input = { data: await SAMPLES[contentType]!(), filename: `sample.${contentType.split('/')[1]!.slice(0, 8)}`, contentType };
      await conforms(t, documentParserConformance(parsers.get(contentType)!, { input, contains: PHRASE }));
    });
  }
});

for (const [plugin, key] of [
  ['orchestrator-core-chat', 'core_chat_v1'],
  ['orchestrator-react-agent', 'react_agent_v1'],
  ['./test/fixtures/plugins/hello-orchestrator', 'hello_v1'],
] as const) {
  t.test(`${plugin}: ${key} keeps every orchestrator rule`, async (t) => {
    const kernel = await loadFirstPartyPlugin(plugin);
    const orchestrator = kernel.registry(extensionPoints.orchestrators).get(key)!;
    // core_chat_v1 schedules tasks from the conversation, so it is also held to the scheduling rules.
    const scheduling = key === 'core_chat_v1' ? { request: 'Remind me in 10 minutes to check the order status.' } : undefined;
    await conforms(t, orchestratorConformance(orchestrator, { ...(scheduling && { scheduling }) }));
    // The model rules hold vacuously for a runtime that never asks the model: the first-party ones do ask it.
    const model = scriptedModel([{ tokens: ['Two ', 'days.'] }]);
    for await (const event of orchestrator.run(fakeTurnContext(model))) void event;
    t.equal(model.calls.length > 0, plugin.startsWith('orchestrator-'), `the model was ${model.calls.length > 0 ? '' : 'not '}asked`);
  });
}

/** An orchestrator that streams the final model's answer; `collect` and `swallow` break one rule each. */
function modelOrchestrator(options: { collect?: boolean; swallow?: boolean } = {}): Orchestrator {
  return {
    displayName: 'Fake',
    description: 'Streams the final model.',
    experimental: false,
    async *run(context): AsyncGenerator<TurnEvent, TurnResult, void> {
      const model = context.models.chatModel('final');
      const pieces: string[] = [];
      try {
        for await (const chunk of model.stream([{ role: 'user', content: context.message }], { signal: context.signal })) {
          if (chunk.type !== 'token') continue;
          pieces.push(chunk.content);
          if (!options.collect) yield { type: 'token', content: chunk.content };
        }
      } catch (error) {
        if (!options.swallow) throw error;
        yield { type: 'token', content: 'Sorry.' };
        return { reply: 'Sorry.', response_source: 'fake', observation: {} };
      }
      if (options.collect) yield { type: 'token', content: pieces.join('') };
      return { reply: pieces.join(''), response_source: 'fake', observation: {} };
    },
  };
}

t.test('an orchestrator that breaks a rule fails that rule, and says how', async (t) => {
  t.same(await broken(orchestratorConformance(modelOrchestrator())), [], 'a correct orchestrator breaks no rule');
  const buffering = await broken(orchestratorConformance(modelOrchestrator({ collect: true })));
  t.same(
    buffering.map((f) => f.rule),
    ["the model's tokens are streamed as they arrive, not after the whole answer"],
  );
  t.match(buffering[0]!.message, 'the reply is buffered');
  const swallowing = await broken(orchestratorConformance(modelOrchestrator({ swallow: true })));
  t.same(
    swallowing.map((f) => f.rule),
    ['a model that fails ends the turn with an error, not a reply'],
  );
  t.match(swallowing[0]!.message, 'the turn ended with the reply "Sorry." and no error event');
});

t.test('an orchestrator that declares grounding but answers past the policy fails the grounding rules', async (t) => {
  const ignoring = { ...modelOrchestrator(), grounding: true };
  t.same(
    (await broken(orchestratorConformance(ignoring))).map((f) => f.rule),
    [
      "a strict grounded agent with no evidence replies by its low-confidence behaviour, not with the model's words",
      "a grounded agent's reply is the grounded answer over the turn's evidence, streamed, with its citations",
      'a grounded answer citing evidence the turn did not have is never the reply',
    ],
  );
  t.same(await broken(orchestratorConformance(modelOrchestrator())), [], 'a runtime that does not declare grounding is not held to it');
});

/**
 * An orchestrator that schedules every message naming "remind" for an hour from now; `anyMessage`, `twice` and
 * `quiet` break one scheduling rule each.
 */
function schedulingOrchestrator(options: { anyMessage?: boolean; twice?: boolean; quiet?: boolean } = {}): Orchestrator {
  return {
    displayName: 'Fake scheduler',
    description: 'Schedules reminders.',
    experimental: false,
    async *run(context): AsyncGenerator<TurnEvent, TurnResult, void> {
      let reply = 'Nothing to schedule.';
      if (/reminders\?/.test(context.message)) {
        reply = `${(await context.scheduling.list()).length} reminders.`;
      } else if (/remind/i.test(context.message) && (options.anyMessage || context.message_type === 'user_chat')) {
        const request = { schedule: { kind: 'once' as const, run_at: new Date(Date.now() + 3_600_000).toISOString() }, message: context.message };
        const made = await context.scheduling.create(request);
        if (options.twice) await context.scheduling.create(request);
        reply = made.status === 'done' ? `Scheduled for ${made.task.next_run_at}.` : options.quiet ? 'Sorry.' : `Not scheduled: ${made.reason}`;
      }
      yield { type: 'token', content: reply };
      return { reply, response_source: 'fake', observation: {} };
    },
  };
}

t.test('an orchestrator that breaks a scheduling rule fails that rule, and says how', async (t) => {
  const scheduling = { scheduling: { request: 'Remind me in an hour to call Ana.' } };
  const failed = async (options: Parameters<typeof schedulingOrchestrator>[0]) =>
    (await broken(orchestratorConformance(schedulingOrchestrator(options), scheduling))).map((f) => `${f.rule}: ${f.message}`);
  t.same(await failed({}), [], 'a correct scheduling orchestrator breaks no rule');
  t.match(await failed({ anyMessage: true }), [/from a message that is not a user's chat.*from a rule message/]);
  t.match(await failed({ twice: true }), [/exactly one task.*made 2 tasks for one request/]);
  t.match(await failed({ quiet: true }), [/refuses still ends.*does not tell the user why/]);
});

t.test('an embedder that breaks a rule fails that rule, and says how', async (t) => {
  const good: Embedder = {
    describe: () => ({ backend_type: 'fake', provider: 'test', model: 'fake-1', dim: 3 }),
    async embed(texts, options) {
      options?.signal?.throwIfAborted();
      return texts.map((s) => [s.length + 1, 1, 0]);
    },
  };
  t.same(await broken(embedderConformance(good)), [], 'a correct embedder breaks no rule');
  const shortVectors: Embedder = { ...good, embed: async (texts) => texts.map(() => [1, 0]) };
  const failures = await broken(embedderConformance(shortVectors));
  t.same(
    failures.map((f) => f.rule),
    ['embed() gives one vector per text, in order, each of the described length and finite', 'embed() with an aborted signal rejects'],
  );
  t.match(
    failures[0]!.message,
    'embedder conformance, rule "embed() gives one vector per text, in order, each of the described length and finite": the vector of text 0 has length 2, not 3',
  );
  const deaf: Embedder = { ...good, embed: async (texts) => texts.map((s) => [s.length + 1, 1, 0]) };
  t.same(
    (await broken(embedderConformance(deaf))).map((f) => f.rule),
    ['embed() with an aborted signal rejects'],
    'an embedder that ignores its signal breaks that rule alone',
  );
});

t.test('a parser that breaks a rule fails that rule, and says how', async (t) => {
  const sample = { input: { data: text(PHRASE), filename: 'a.txt', contentType: 'text/plain' }, contains: PHRASE };
  const good: DocumentParser = {
    async parse(input, options) {
      options?.signal?.throwIfAborted();
      const body = new TextDecoder().decode(input.data);
      return { text: body, elements: [{ type: 'NarrativeText', text: body }], metadata: {} };
    },
  };
  t.same(await broken(documentParserConformance(good, sample)), [], 'a correct parser breaks no rule');
  const untyped: DocumentParser = { parse: async (input, options) => ({ ...(await good.parse(input, options)), elements: [{ type: '', text: PHRASE }] }) };
  const failures = await broken(documentParserConformance(untyped, sample));
  t.same(
    failures.map((f) => f.rule),
    ['parse() gives the text, typed elements and metadata of a document'],
  );
  t.match(failures[0]!.message, /element 0 is .* not \{type, text\}/);
});

/** A small in-memory vector store that keeps every rule, for breaking one at a time. */
function memoryRetriever(): Retriever {
  const collections = new Map<string, Map<string, VectorPoint>>();
  const matches = (p: VectorPoint, where?: VectorFilter) =>
    Object.entries(where ?? {}).every(([key, want]) => (Array.isArray(want) ? want.includes(p.metadata[key] as string) : p.metadata[key] === want));
  const of = (c: string) => collections.get(c) ?? collections.set(c, new Map()).get(c)!;
  const dot = (a: number[], b: number[]) => a.reduce((s, v, i) => s + v * b[i]!, 0);
  return {
    async upsert(c, points) {
      for (const p of points) of(c).set(p.id, p);
    },
    async query(c, { vector, topK, where }) {
      return [...of(c).values()]
        .filter((p) => matches(p, where))
        .map((p) => ({ id: p.id, document: p.document, metadata: p.metadata, score: Math.max(0, Math.min(1, dot(p.vector, vector))) }))
        .sort((a, b) => b.score - a.score)
        .slice(0, topK);
    },
    async delete(c, { ids, where }) {
      for (const p of [...of(c).values()]) if (ids?.includes(p.id) || (where && matches(p, where))) of(c).delete(p.id);
    },
    async count(c, where) {
      return [...of(c).values()].filter((p) => matches(p, where)).length;
    },
    health: async () => ({ state: 'ok' }),
  };
}

t.test('a retriever that breaks a rule fails that rule, and says how', async (t) => {
  t.same(await broken(retrieverConformance(memoryRetriever())), [], 'a correct store breaks no rule');
  const store = memoryRetriever();
  const countsEverything: Retriever = { ...store, count: (c) => store.count(c) };
  const failures = await broken(retrieverConformance(countsEverything));
  t.same(
    failures.map((f) => f.rule),
    ['a metadata filter limits query() and count(): equality, and a list meaning "one of"'],
  );
  t.match(failures[0]!.message, 'count where source is one of ["a", "c"] is 3, not 2');
  // As a store that reads an absent document back as null would.
  const dropsEmptyDocuments: Retriever = {
    ...store,
    query: async (c, q) => (await store.query(c, q)).map((hit) => ({ ...hit, document: hit.document || (null as unknown as string) })),
  };
  const dropped = await broken(retrieverConformance(dropsEmptyDocuments));
  t.same(
    dropped.map((f) => f.rule),
    [
      "a point upserted with an empty document (the host's, since SDK 1.16.0) is kept and found, also with documents: false (and metadata: false); its hit's document is ''",
    ],
  );
  t.match(dropped[0]!.message, "the hit's document is null, not ''");
});

t.test("a retriever's queryMany must give each vector what query gives it alone", async (t) => {
  const store = memoryRetriever();
  const many: Retriever = { ...store, queryMany: async (c, { vectors, ...q }) => Promise.all(vectors.map((vector) => store.query(c, { ...q, vector }))) };
  t.same(await broken(retrieverConformance(many)), [], 'a queryMany made of query breaks no rule');
  const RULE = 'queryMany() gives for each vector, in order, the hits query() gives for it alone, and one empty list per vector for an unknown collection';
  const unfiltered: Retriever = { ...many, queryMany: async (c, { where: _, ...q }) => many.queryMany!(c, q) };
  const ignored = await broken(retrieverConformance(unfiltered));
  t.same(
    ignored.map((f) => f.rule),
    [RULE],
  );
  t.match(ignored[0]!.message, /vector 0 with a filter: queryMany gave \[m2@.*, m1@.*\], query \[m3@/);
  const reversed: Retriever = { ...many, queryMany: async (c, q) => (await many.queryMany!(c, q)).reverse() };
  t.match((await broken(retrieverConformance(reversed)))[0]?.message, /vector 0: queryMany gave \[m3@/);
});

t.test('the built-in local object store keeps every object store rule; one that loses NotFoundError fails that rule', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-conformance-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = createLocalObjectStore(dir);
  await conforms(t, objectStoreConformance(store));
  const vague = { ...store, get: (key: string) => store.get(key).catch(() => Promise.reject(new Error('no such file'))) };
  const failures = await broken(objectStoreConformance(vague));
  t.same(
    failures.map((f) => f.rule),
    ['a missing key is a NotFoundError for get() and open()'],
  );
  t.match(failures[0]!.message, 'get() of a missing key rejected with Error: no such file, not a NotFoundError');
});

/** A tool backend of one in-memory server with an `echo` tool and a `slow` one; `throwing` breaks one rule. */
function memoryToolBackend(options: { throwing?: boolean } = {}): ToolBackend {
  return {
    validateConfig: (config) => (typeof config.name === 'string' ? [] : [{ loc: ['connection_config', 'name'], msg: 'is required', type: 'missing' }]),
    healthCheck: async () => ({ ok: true }),
    listTools: async () => [
      { name: 'echo', description: 'Answers its arguments.', input_schema: { type: 'object' } },
      { name: 'slow', description: 'Answers after a minute.', input_schema: { type: 'object' } },
    ],
    async callTool(_server, name, args, { timeoutMs, signal }) {
      if (signal?.aborted) return { status: 'error', result: null, error: 'the caller has gone' };
      if (name === 'echo') return { status: 'success', result: args };
      if (name === 'slow')
        return new Promise((resolve) => setTimeout(() => resolve({ status: 'timeout', result: null, error: `no answer in ${timeoutMs} ms` }), timeoutMs));
      if (options.throwing) throw new Error(`unknown tool ${name}`);
      return { status: 'error', result: null, error: `unknown tool ${name}` };
    },
    close: async () => undefined,
  };
}

t.test('a tool backend that breaks a rule fails that rule, and says how', async (t) => {
  const sample = {
    server: { server_id: 's', transport_type: 'memory', connection_config: { name: 'm' }, secret: null },
    tool: { name: 'echo', args: { a: 1 } },
    slowTool: { name: 'slow', args: {} },
    invalidConfig: {},
  };
  t.same(await broken(toolBackendConformance(memoryToolBackend(), sample)), [], 'a correct backend breaks no rule');
  const failures = await broken(toolBackendConformance(memoryToolBackend({ throwing: true }), sample));
  t.same(
    failures.map((f) => f.rule),
    ['a call that fails is an error outcome, not an exception'],
  );
  t.match(failures[0]!.message, 'callTool() threw Error: unknown tool');
  const rootless: ToolBackend = {
    ...memoryToolBackend(),
    validateConfig: (config) =>
      memoryToolBackend()
        .validateConfig(config)
        .map((issue) => ({ ...issue, loc: issue.loc.slice(1) })),
  };
  const misplaced = await broken(toolBackendConformance(rootless, sample));
  t.same(
    misplaced.map((f) => f.rule),
    ['validateConfig() accepts a working configuration and refuses a broken one with issues under connection_config'],
    'issues not under connection_config break that rule alone',
  );
  t.match(misplaced[0]!.message, 'does not start its loc at "connection_config"');
});

t.test('a tool provider keeps every rule; one that schemas arguments as a string, or answers any name, breaks exactly that rule', async (t) => {
  const provider = (overrides: Partial<ToolProvider> = {}): ToolProvider => ({
    displayName: 'Weather',
    listTools: async () => [{ name: 'forecast', description: 'The forecast for a city.', input_schema: { type: 'object', required: ['city'] } }],
    callTool: async (name, args) =>
      name === 'forecast' ? { status: 'success', result: { city: args.city, sky: 'clear' } } : { status: 'error', result: null, error: `unknown tool ${name}` },
    ...overrides,
  });
  const sample = { tool: { name: 'forecast', args: { city: 'Oslo' } } };
  t.same(await broken(toolProviderConformance(provider(), sample)), [], 'a correct provider breaks no rule');
  const stringly = await broken(
    toolProviderConformance(provider({ listTools: async () => [{ name: 'forecast', description: 'The forecast.', input_schema: 'city' as never }] }), sample),
  );
  t.same(
    stringly.map((f) => f.rule),
    ['listTools() lists each tool once, with a description and an object input schema'],
  );
  t.match(stringly[0]!.message, "a tool's arguments are an object");
  const anything = await broken(toolProviderConformance(provider({ callTool: async () => ({ status: 'success', result: 'sunny' }) }), sample));
  t.same(
    anything.map((f) => f.rule),
    ['a tool it does not list is not a success'],
  );
});

t.test('the skills-mcp plugin: the mcp skill backend keeps every skill backend rule; one whose issues sit elsewhere fails that rule', async (t) => {
  const kernel = await loadFirstPartyPlugin('skills-mcp');
  const backend = kernel.registry(extensionPoints.skillBackends).get('mcp')!;
  const tools: ToolHandle = {
    list: async () => [{ name: 'lookup', description: 'Looks a parcel up.', input_schema: { type: 'object' } }],
    call: async (name, args) => ({ status: 'success', result: { name, args } }),
  };
  const sample = { config: { tool_name: 'lookup', query_argument: 'q' }, invalidConfig: { tool_name: '' }, input: { query: 'parcel 42' }, tools };
  await conforms(t, skillBackendConformance(backend, sample));
  const misplaced: SkillBackend = {
    invoke: (invocation, options) => backend.invoke(invocation, options),
    validateConfig: (config) => backend.validateConfig(config).map((issue) => ({ ...issue, loc: issue.loc.slice(1) })),
  };
  const failures = await broken(skillBackendConformance(misplaced, sample));
  t.same(
    failures.map((f) => f.rule),
    ['validateConfig() accepts a working config and refuses a broken one with issues under config'],
  );
  t.match(failures[0]!.message, 'does not start its loc at "config"');
});

t.test('a model provider that breaks a rule fails that rule, and says how', async (t) => {
  const spec = { model_name: 'scripted-1', temperature: null, timeoutMs: 1_000, options: {} };
  const provider = (deaf: boolean): ModelProvider => ({
    displayName: 'Scripted',
    offline: true,
    createChatModel() {
      const model = scriptedModel([{ tokens: ['Two ', 'days.'] }, { tokens: ['Two ', 'days.'] }, { tokens: ['Two ', 'days.'] }, { tokens: ['Two ', 'days.'] }]);
      if (!deaf) return model;
      return { ...model, stream: (messages) => model.stream(messages), invoke: (messages) => model.invoke(messages) };
    },
  });
  t.same(await broken(modelProviderConformance(provider(false), spec)), [], 'a correct provider breaks no rule');
  const failures = await broken(modelProviderConformance(provider(true), spec));
  t.same(
    failures.map((f) => f.rule),
    ['stream() and invoke() with an aborted signal reject'],
  );
  t.match(failures[0]!.message, 'stream() answered a caller that had gone');
});

t.test('the fusion-llm plugin: fusion_llm keeps every Fusion runtime rule', async (t) => {
  const kernel = await loadFirstPartyPlugin('fusion-llm');
  await conforms(t, fusionRuntimeConformance(kernel.registry(extensionPoints.fusionRuntimes).get('fusion_llm')!));
});

t.test('a Fusion runtime that breaks a rule fails that rule, and says how', async (t) => {
  const kernel = await loadFirstPartyPlugin('fusion-llm');
  const real = kernel.registry(extensionPoints.fusionRuntimes).get('fusion_llm')!;
  // Forgets the repair: the model is asked the same question again and cannot know what to fix.
  const forgetful: FusionRuntime = { execute: (request, context) => real.execute({ ...request, repair: undefined }, context) };
  const forgot = await broken(fusionRuntimeConformance(forgetful));
  t.same(
    forgot.map((f) => f.rule),
    ['on a repair attempt, the errors the host found reach the model'],
  );
  // Throws on an answer that is not JSON, where the host wants the raw text to validate and repair.
  const strict: FusionRuntime = {
    async execute(request, context) {
      const result = await real.execute(request, context);
      if (result.output_item_list.some((i) => typeof i.json_value === 'string' && i.kind === 'structured_json')) throw new Error('not JSON');
      return result;
    },
  };
  t.same(
    (await broken(fusionRuntimeConformance(strict))).map((f) => f.rule),
    ['an answer that is not JSON is returned as it came, one item per slot, not thrown'],
  );
});

async function twoPagePdf(first: string, second: string): Promise<Uint8Array> {
  const doc = new PDFDocument();
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => doc.on('end', resolve));
  doc.text(first).addPage().text(second);
  doc.end();
  await ended;
  return new Uint8Array(Buffer.concat(chunks));
}

async function recognizerSamples() {
  const parsers = (await sharedPlugin('parsers-local')).registry(extensionPoints.documentParsers);
  const docx = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
  return {
    pdf: {
      input: {
        data: await twoPagePdf('Invoice number: INV-7', `Total due: 1,250.00 EUR. ${PHRASE}.`),
        filename: 'invoice.pdf',
        contentType: 'application/pdf',
      },
      contains: PHRASE,
      page: 2,
    },
    other: {
      input: { data: await SAMPLES[docx]!(), filename: 'letter.docx', contentType: docx },
      contains: PHRASE,
      page: 1,
    },
    parse: (input: DocumentInput) => parsers.get(input.contentType)!.parse(input),
  };
}

t.test('the recognizer-local plugin: local_layout keeps every document recognizer rule', async (t) => {
  const kernel = await sharedPlugin('recognizer-local');
  await conforms(t, documentRecognizerConformance(kernel.registry(extensionPoints.documentRecognizers).get('local_layout')!, await recognizerSamples()));
});

t.test('a document recognizer that breaks a rule fails that rule, and says how', async (t) => {
  const real = (await sharedPlugin('recognizer-local')).registry(extensionPoints.documentRecognizers).get('local_layout')!;
  const samples = await recognizerSamples();
  // Renders every page, whatever the host asked: a 500-page upload would draw 500 images.
  const greedy: DocumentRecognizer = {
    contentTypes: real.contentTypes,
    prepare: (input, context) => real.prepare(input, { ...context, limits: { ...context.limits, preview_pages: 10 } }),
    locate: (values, document) => real.locate(values, document),
  };
  t.same(
    (await broken(documentRecognizerConformance(greedy, samples))).map((f) => f.rule),
    ['prepare() renders only as many previews as asked'],
  );
  // Places every value on page 1.
  const lazy: DocumentRecognizer = {
    ...greedy,
    prepare: real.prepare.bind(real),
    locate: (values) => values.map((v) => ({ field_id: v.field_id, page_number: 1, matched_text: null })),
  };
  const failures = await broken(documentRecognizerConformance(lazy, samples));
  t.same(
    failures.map((f) => f.rule),
    ['locate() gives the page a value is on, and null for a value on none'],
  );
});

t.test('the etl-mapper plugin: etl_mapper keeps every ETL runtime rule, with the model plan and with the deterministic one', async (t) => {
  const kernel = await loadFirstPartyPlugin('etl-mapper');
  await conforms(t, etlRuntimeConformance(kernel.registry(extensionPoints.etlRuntimes).get('etl_mapper')!));
  const deterministic = await loadFirstPartyPlugin('etl-mapper', { use_model: false });
  await conforms(t, etlRuntimeConformance(deterministic.registry(extensionPoints.etlRuntimes).get('etl_mapper')!));
});

t.test('an ETL runtime that breaks a rule fails that rule, and says how', async (t) => {
  const kernel = await loadFirstPartyPlugin('etl-mapper');
  const real = kernel.registry(extensionPoints.etlRuntimes).get('etl_mapper')!;
  // Keeps rows whose required cells are empty.
  const lenient: EtlRuntime = {
    plan: (input, context) => real.plan(input, context),
    converter: (plan, input) => {
      const convert = real.converter(plan, input);
      return (row) => ({ ...convert(row), rejected: false });
    },
  };
  t.same(
    (await broken(etlRuntimeConformance(lenient))).map((f) => f.rule),
    ['a required column without a value rejects the row'],
  );
  // Throws on a cell that does not fit, where the host wants it reported.
  const strict: EtlRuntime = {
    plan: (input, context) => real.plan(input, context),
    converter: (plan, input) => {
      const convert = real.converter(plan, input);
      return (row) => {
        const converted = convert(row);
        if (converted.issues.some((i) => i.kind === 'rejected')) throw new Error('bad cell');
        return converted;
      };
    },
  };
  t.same(
    (await broken(etlRuntimeConformance(strict))).map((f) => f.rule),
    ['a cell that does not fit its type is emptied and reported, not thrown', 'a required column without a value rejects the row'],
  );
});
