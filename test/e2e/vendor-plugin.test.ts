// The vendor path of CONTRIBUTING.md, end to end and outside the workspace: pack the SDK, scaffold a plugin of every kind
// with `agent-host plugin new` in a temporary folder, `npm install && npm test` in each (the conformance suites pass
// in startTestKernel, with no server), point a host process at the orchestrator and the tool backend by config, and
// drive one chat turn and one tool call through them. A scaffold whose runtime buffers its reply then fails its test,
// naming the rule.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from '@agent-host/core';
import { SDK_VERSION } from '@agent-host/sdk';
import t from 'tap';
import { runCli, startHostProcess } from '../helpers/cli.js';
import { AdminClient } from '../helpers/host.js';
import { createTestDatabase, query } from '../helpers/services.js';
import { tokensOf } from '../helpers/sse.js';

const exec = promisify(execFile);

/** Runs npm in `cwd`; resolves with its output and exit code instead of throwing. */
async function npm(cwd: string, ...args: string[]): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await exec('npm', args, {
      cwd,
      maxBuffer: 32 * 1024 * 1024,
      env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
    });
    return { code: 0, output: stdout + stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}` };
  }
}

async function scaffold(id: string, kind: string, dir: string, tarball: string): Promise<void> {
  const run = runCli(['plugin', 'new', id, '--kind', kind, '--dir', dir, '--sdk', tarball], process.env);
  const { code } = await run.exit;
  if (code !== 0) throw new Error(`plugin new ${kind} exited ${code}: ${run.output()}`);
}

t.test(
  'a vendor scaffolds and tests a plugin of every kind, and ships an orchestrator, a tool backend and a tool provider, from outside the repository',
  async (t) => {
    const vendor = await mkdtemp(path.join(os.tmpdir(), 'agent-host-vendor-'));
    t.teardown(() => rm(vendor, { recursive: true, force: true }));
    t.ok(path.relative(PROJECT_ROOT, vendor).startsWith('..'), 'the vendor folder is outside the workspace');

    const packed = await exec('npm', ['pack', '--json', '--workspace', '@agent-host/sdk', '--pack-destination', vendor], { cwd: PROJECT_ROOT });
    const tarball = path.join(vendor, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
    // The rules each kind's suite has: `npm test` there must pass every one.
    const kinds = { orchestrator: 7, 'tool-backend': 7, 'tool-provider': 4, 'skill-backend': 4, retriever: 7, embedder: 4, parser: 3, 'model-provider': 6 };
    const folders: Record<string, string> = {};
    for (const kind of Object.keys(kinds)) {
      folders[kind] = path.join(vendor, `acme-${kind}`);
      await scaffold(`acme-${kind}`, kind, folders[kind]!, tarball);
    }
    const chat = folders.orchestrator!;
    const tools = folders['tool-backend']!;
    const provided = folders['tool-provider']!;

    // Installed and tested three at a time (npm and tsc wait on the disk and the registry cache as much as the CPU).
    const outcomes = new Map<string, Promise<{ installed: { code: number; output: string }; tested: { code: number; output: string }; sdk: string }>>();
    const queue = Object.keys(kinds);
    const worker = async () => {
      for (let kind = queue.shift(); kind; kind = queue.shift()) {
        const dir = folders[kind]!;
        const outcome = (async () => {
          const installed = await npm(dir, 'install');
          const sdk = installed.code
            ? ''
            : (JSON.parse(await readFile(path.join(dir, 'node_modules', '@agent-host', 'sdk', 'package.json'), 'utf8')) as { version: string }).version;
          return { installed, sdk, tested: installed.code ? installed : await npm(dir, 'test') };
        })();
        outcomes.set(kind, outcome);
        await outcome;
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    for (const [kind, rules] of Object.entries(kinds)) {
      await t.test(`${kind}: npm install && npm test pass in the scaffolded package`, async (t) => {
        const { installed, sdk, tested } = await outcomes.get(kind)!;
        t.equal(installed.code, 0, `npm install: ${installed.output.slice(-600)}`);
        t.equal(sdk, SDK_VERSION, 'the SDK came from the packed tarball, as its own copy');
        t.equal(tested.code, 0, `npm test: ${tested.output.slice(-1500)}`);
        t.match(tested.output, / keeps every .* rule/, 'the conformance suite ran through startTestKernel');
        t.match(tested.output, new RegExp(`# pass ${rules + 1}\\b`), `its ${rules} rules passed`);
        t.match(tested.output, /# fail 0/);
      });
    }

    await t.test('a host pointed at the three folders by config runs a chat turn and tool calls through them', async (t) => {
      const listed = runCli(['plugins', 'list', '--json'], { ...process.env, AGENT_HOST_PLUGINS_EXTRA: `${chat},${tools},${provided}` });
      const listedCode = (await listed.exit).code;
      t.equal(listedCode, 0, listedCode ? listed.output() : 'plugins list exits 0');
      const plugins = JSON.parse(listed.output()) as { id: string; origin: string; location: string; registered: Record<string, string[]> }[];
      t.match(
        plugins.filter((p) => p.id.startsWith('acme-')),
        [
          { id: 'acme-orchestrator', origin: 'path', location: chat, registered: { orchestrators: ['acme_orchestrator_v1'] } },
          { id: 'acme-tool-backend', origin: 'path', location: tools, registered: { toolBackends: ['acme_tool_backend'] } },
          { id: 'acme-tool-provider', origin: 'path', location: provided, registered: { toolProviders: ['acme_tool_provider'] } },
        ],
        'plugins list shows where each came from and what it registers',
      );

      const databaseUrl = await createTestDatabase(t);
      const configFile = path.join(vendor, 'host.toml');
      await writeFile(
        configFile,
        ['[plugins]', `extra = ${JSON.stringify([chat, tools, provided])}`, '', '[plugins.acme-orchestrator]', 'preamble = "Answer as Acme."'].join('\n'),
      );
      const { url } = await startHostProcess(t, databaseUrl, { AGENT_HOST_CONFIG: configFile }, 'vendor');
      const admin = new AdminClient(url);
      await admin.login();

      const agent = await admin.request('POST', '/agents', {
        name: 'Acme desk',
        agent_type: 'chat',
        public_access_mode: 'public_anonymous',
        orchestrator_key: 'acme_orchestrator_v1',
      });
      t.equal(agent.status, 201, 'an agent on the vendor runtime is created');
      const turn = await admin.stream({ agent_id: agent.body.agent_id, message: 'When do parcels ship?' });
      t.equal(turn.status, 200);
      t.notOk(
        turn.events.some((e) => e.type === 'error'),
        `no error event: ${JSON.stringify(turn.events.filter((e) => e.type === 'error'))}`,
      );
      t.ok(tokensOf(turn.events).length > 0, 'the reply streamed as tokens');
      const done = turn.events.at(-1) as { type: string; turn_id?: string };
      t.equal(done.type, 'done');
      const [stored] = await query(databaseUrl, 'SELECT response_source FROM conversation_turns WHERE id = $1', [done.turn_id]);
      t.equal(stored?.response_source, 'acme_orchestrator_v1', "the vendor's runtime answered the turn");

      const server = await admin.request('POST', '/mcp-servers', {
        name: 'Acme tools',
        transport_type: 'acme_tool_backend',
        connection_config: { greeting: 'Hello' },
      });
      t.equal(server.status, 201, 'a tool server of the vendor transport is created');
      const refused = await admin.request('POST', '/mcp-servers', {
        name: 'Acme tools, broken',
        transport_type: 'acme_tool_backend',
        connection_config: { greeting: 42 },
      });
      t.equal(refused.status, 422, "the backend's own validateConfig refuses a broken config");
      const call = await admin.request('POST', `/mcp-servers/${server.body.mcp_server_id}/test-call`, {
        action: 'tools/call',
        tool_name: 'echo',
        arguments: { text: 'world' },
      });
      t.equal(call.status, 200, 'test-call answers');
      t.match(call.body, { status: 'success', result: { text: 'Hello world' } }, "the vendor's tool answered");

      const listedServers = (await admin.request('GET', '/mcp-servers')).body.items as { mcp_server_id: string; name: string; transport_type: string }[];
      const native = listedServers.find((s) => s.transport_type === 'tool_provider');
      t.equal(native?.name, 'Acme Tool Provider', 'the tool provider is listed as a tool server, created by nobody');
      const counted = await admin.request('POST', `/mcp-servers/${native?.mcp_server_id}/test-call`, {
        action: 'tools/call',
        tool_name: 'count_words',
        arguments: { text: 'one two three' },
      });
      t.match(counted.body, { status: 'success', result: { words: 3 } }, "the provider's tool answered");
    });

    await t.test('a scaffolded runtime that buffers its reply fails its own test, naming the rule', async (t) => {
      const source = path.join(chat, 'src', 'index.ts');
      const original = await readFile(source, 'utf8');
      const buffering = original
        .replace("yield { type: 'token', content: chunk.content };", '')
        .replace('return { reply, response_source:', "yield { type: 'token', content: reply };\n    return { reply, response_source:");
      t.not(buffering, original, 'the runtime was changed');
      await writeFile(source, buffering);
      const tested = await npm(chat, 'test');
      t.not(tested.code, 0, 'npm test fails');
      t.match(
        tested.output,
        /orchestrator conformance, rule "the model's tokens are streamed as they arrive, not after the whole answer": no token reached the client/,
      );
    });
  },
);
