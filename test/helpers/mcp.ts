// A host with the tools-mcp plugin and an OpenAI-compatible fixture model
// ("fixture-model") whose answers each test scripts by stage: the tool
// selector, the argument generator (both recognised by their system prompt)
// and the final reply. Plus helpers to read a turn's context and audits.
import { readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { PROJECT_ROOT } from '@agent-host/core';
import { parse as parseToml } from 'smol-toml';
import { startOpenAiFixture, type FixtureReply, type OpenAiFixture } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from './host.js';
import { query } from './services.js';
import { tokensOf } from './sse.js';

interface Test {
  teardown(fn: () => Promise<void> | void): void;
}

export type Stage = 'selection' | 'arguments' | 'final';

/** What the scripted model answers per stage; an object is sent as JSON text. `refuse_structured` answers 400 to a request with a response_format. */
export interface Script {
  selection?: Record<string, unknown> | string;
  arguments?: Record<string, unknown> | string;
  final?: string;
  refuse_structured?: boolean;
}

export const stageOf = (body: any): Stage => {
  const system = String(body?.messages?.[0]?.content ?? '');
  if (system.startsWith('You decide whether')) return 'selection';
  if (system.startsWith('You prepare the arguments')) return 'arguments';
  return 'final';
};

/** `AGENT_HOST__PLUGINS__ENABLED` for the default plugins of config/default.toml plus `extra` (paths to fixture plugins). */
async function pluginsEnv(extra: readonly string[]): Promise<Record<string, string>> {
  if (extra.length === 0) return {};
  const defaults = parseToml(await readFile(path.join(PROJECT_ROOT, 'config', 'default.toml'), 'utf8')) as { plugins: { enabled: string[] } };
  return { AGENT_HOST__PLUGINS__ENABLED: JSON.stringify([...defaults.plugins.enabled, ...extra]) };
}

export async function startToolHost(t: Test, options: { mcpToml?: string; env?: Record<string, string>; plugins?: string[] } = {}) {
  let script: Script = {};
  const model = await startOpenAiFixture({
    respond: (body): FixtureReply => {
      const stage = stageOf(body);
      if (script.refuse_structured && body.response_format) return { status: 400, error: { message: 'response_format is not supported by this model' } };
      if (stage === 'final') return { content: script.final ?? 'Here is what I found.' };
      const answer = script[stage];
      return { content: answer === undefined ? '{}' : typeof answer === 'string' ? answer : JSON.stringify(answer) };
    },
  });
  t.teardown(() => model.close());
  const configFile = path.join(os.tmpdir(), `agent-host-mcp-${randomBytes(4).toString('hex')}.toml`);
  await writeFile(
    configFile,
    [
      `[[models.catalog]]`,
      'model_name = "fixture-model"',
      'model_provider = "openai"',
      'description = "scripted"',
      'category = "chat"',
      `options = { base_url = ${JSON.stringify(model.url)} }`,
      options.mcpToml ?? '',
    ].join('\n'),
  );
  t.teardown(() => rm(configFile, { force: true }));
  const host = await startTestHost(t, { env: { AGENT_HOST_CONFIG: configFile, ...(await pluginsEnv(options.plugins ?? [])), ...options.env } });
  const admin = new AdminClient(host.url);
  await admin.login();
  return {
    host,
    admin,
    model,
    script: (next: Script) => void (script = next),
    /** The fixture requests since `from`, by stage. */
    stagesSince: (from: number) => model.bodies.slice(from).map(stageOf),
    async chat(body: { thread_id: string; agent_id: string; message: string; message_type?: string }) {
      const result = await admin.stream(body);
      return { events: result.events, reply: tokensOf(result.events), context: await turnContext(admin, body.thread_id) };
    },
    /** Seeds a session's history (oldest first) as if earlier turns had stored it. */
    async seedHistory(threadId: string, agentId: string, messages: ['user' | 'assistant', string][]) {
      await query(host.databaseUrl, "INSERT INTO chat_sessions (id, agent_id, status, created_at, updated_at) VALUES ($1, $2, 'AI_ACTIVE', now(), now())", [
        threadId,
        agentId,
      ]);
      for (const [i, [role, content]] of messages.entries()) {
        await query(
          host.databaseUrl,
          'INSERT INTO chat_messages (id, session_id, role, content, created_at) VALUES (gen_random_uuid(), $1, $2, $3, now() - make_interval(secs => $4))',
          [threadId, role, content, 100 - i],
        );
      }
    },
  };
}

export type ToolHost = Awaited<ReturnType<typeof startToolHost>>;

/** The newest turn's context of a session (`/sessions/{id}/turns/{turn_id}/context`). */
export async function turnContext(admin: AdminClient, threadId: string) {
  const turns = await admin.request('GET', `/sessions/${threadId}/turns`);
  const turn = turns.body.items[0];
  return (await admin.request('GET', `/sessions/${threadId}/turns/${turn.turn_id}/context`)).body;
}

/** The attributes of the named span of a turn context, or undefined. */
export const spanOf = (context: any, name: string): Record<string, any> | undefined =>
  context.context_payload.trace_spans.find((s: { name: string }) => s.name === name)?.attributes;

export const spanNames = (context: any): string[] => context.context_payload.trace_spans.map((s: { name: string }) => s.name);

export type { OpenAiFixture };
