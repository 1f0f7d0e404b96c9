// `agent-host plugin new`: writes a complete plugin package from host/plugin-templates, one folder per kind, whose
// test boots the plugin in startTestKernel and runs the conformance suite of its extension point.
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { extensionPoints, SDK_VERSION, type ExtensionPoint } from '@agent-host/sdk';

interface PluginKind {
  /** The extensionPoints member the plugin registers into. */
  point: string;
  /** The conformance suite's function and its name in sentences. */
  suite: string;
  suiteName: string;
  key(id: string): string;
  summary: string;
  /** How an operator or administrator puts the registered key to use, for the README. */
  use(key: string): string;
}

const snake = (id: string) => id.replaceAll('-', '_');
/** The name an extension point has in `extensionPoints` and in a manifest's `contributes`. */
const nameOf = (point: ExtensionPoint<unknown>) => Object.entries(extensionPoints).find(([, ref]) => ref === point)![0];

export const PLUGIN_KINDS = {
  orchestrator: {
    point: nameOf(extensionPoints.orchestrators),
    suite: 'orchestratorConformance',
    suiteName: 'orchestrator',
    key: (id) => `${snake(id)}_v1`,
    summary: "a chat runtime that answers with the agent's model.",
    use: (key) => `Give an agent \`"orchestrator_key": "${key}"\` (\`POST /agents\` or \`PATCH /agents/{agent_id}\`) and chat with it.`,
  },
  'tool-backend': {
    point: nameOf(extensionPoints.toolBackends),
    suite: 'toolBackendConformance',
    suiteName: 'tool backend',
    key: snake,
    summary: 'a tool transport whose tools run in the plugin.',
    use: (key) =>
      `Create a tool server with \`"transport_type": "${key}"\` and \`"connection_config": {"greeting": "Hello"}\` (\`POST /mcp-servers\`; \`POST /mcp-servers/{mcp_server_id}/test-call\` calls a tool), mount it on an agent, and its \`echo\` tool is called by the same pipeline, policy and audits as any MCP tool.`,
  },
  'tool-provider': {
    point: nameOf(extensionPoints.toolProviders),
    suite: 'toolProviderConformance',
    suiteName: 'tool provider',
    key: snake,
    summary: 'native tools (a word counter) that agents call through the tool pipeline.',
    use: () =>
      'Enable the plugin: the host lists it as a tool server of transport `tool_provider` (`GET /mcp-servers`). Mount that server on an agent (`POST /agents/{agent_id}/mcp-mounts`) and its `count_words` tool is called by the same pipeline, policy and audits as any MCP tool.',
  },
  'skill-backend': {
    point: nameOf(extensionPoints.skillBackends),
    suite: 'skillBackendConformance',
    suiteName: 'skill backend',
    key: snake,
    summary: 'a skill backend that fills a template from the skill input.',
    use: (key) => `Give a skill version \`"backend_type": "${key}"\` and \`"config": {"template": "You said: {text}"}\`.`,
  },
  retriever: {
    point: nameOf(extensionPoints.retrievers),
    suite: 'retrieverConformance',
    suiteName: 'retriever',
    key: snake,
    summary: 'a vector store (in memory: replace it with your database).',
    use: (key) => `Select it with \`[knowledge] retriever = "${key}"\` (\`AGENT_HOST__KNOWLEDGE__RETRIEVER=${key}\`).`,
  },
  embedder: {
    point: nameOf(extensionPoints.embedders),
    suite: 'embedderConformance',
    suiteName: 'embedder',
    key: snake,
    summary: 'an embedder that hashes words into vectors, offline.',
    use: (key) =>
      `Select it with \`[knowledge] embedder = "${key}"\` (\`AGENT_HOST__KNOWLEDGE__EMBEDDER=${key}\`); documents are embedded again after a change.`,
  },
  parser: {
    point: nameOf(extensionPoints.documentParsers),
    suite: 'documentParserConformance',
    suiteName: 'document parser',
    key: (id) => `application/x-${id}`,
    summary: 'a document parser for its own content type.',
    use: (key) =>
      `Documents uploaded as \`${key}\` are parsed by it; change \`CONTENT_TYPE\` in \`src/index.ts\` (and \`contributes\` in \`package.json\`) to your format's type.`,
  },
  'model-provider': {
    point: nameOf(extensionPoints.modelProviders),
    suite: 'modelProviderConformance',
    suiteName: 'model provider',
    key: snake,
    summary: 'a model provider (an offline echo: replace it with calls to your model).',
    use: (key) => `Add a \`[[models.catalog]]\` entry with \`model_provider = "${key}"\`, then choose its model on an agent.`,
  },
} satisfies Record<string, PluginKind>;

export type PluginKindName = keyof typeof PLUGIN_KINDS;

export interface ScaffoldOptions {
  id: string;
  kind: string;
  /** The new package's folder; must not exist or be empty. */
  directory: string;
  /** The devDependency spec of `@agent-host/sdk` (a range, or a packed tarball's path); the peer range stays the SDK's. */
  sdk?: string;
}

const PLUGIN_ID = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const TEMPLATES = new URL('../plugin-templates/', import.meta.url);
// The toolchain the scaffold compiles with: the host's own TypeScript, and the types of the oldest Node it supports.
const DEV_DEPENDENCIES = { '@types/node': '^20.19.0', typescript: '~5.9.3' };

/** The `__NAME__` placeholders of the templates (valid identifiers, so a template reads as TypeScript). */
export const PLACEHOLDER = /__(PLUGIN_ID|PACKAGE_NAME|SDK_RANGE|KEY|TITLE|CLASS|SUITE_FN|SUITE|POINT|SUMMARY|USE)__/g;

export class ScaffoldError extends Error {}

/** Writes the package and returns the files written, relative to its folder. */
export async function scaffoldPlugin(options: ScaffoldOptions): Promise<string[]> {
  if (!PLUGIN_ID.test(options.id)) throw new ScaffoldError(`plugin id "${options.id}" must be kebab-case: lowercase letters and digits, words joined by "-"`);
  const kind = (PLUGIN_KINDS as Record<string, PluginKind>)[options.kind];
  if (!kind) throw new ScaffoldError(`unknown kind "${options.kind}": choose one of ${Object.keys(PLUGIN_KINDS).join(', ')}`);
  if (existsSync(options.directory) && (await readdir(options.directory)).length > 0) {
    throw new ScaffoldError(`${options.directory} exists and is not empty: choose a new folder with --dir`);
  }
  const [major, minor] = SDK_VERSION.split('.');
  const sdkRange = `^${major}.${minor}.0`;
  const packageName = `agent-host-plugin-${options.id}`;
  const key = kind.key(options.id);
  const title = options.id
    .split('-')
    .map((word) => word[0]!.toUpperCase() + word.slice(1))
    .join(' ');
  const values: Record<string, string> = {
    PLUGIN_ID: options.id,
    PACKAGE_NAME: packageName,
    SDK_RANGE: sdkRange,
    KEY: key,
    TITLE: title,
    CLASS: title.replaceAll(' ', '') + 'Plugin',
    SUITE_FN: kind.suite,
    SUITE: kind.suiteName,
    POINT: kind.point,
    SUMMARY: kind.summary,
    USE: kind.use(key),
  };
  const fill = (text: string) => text.replace(PLACEHOLDER, (_, name: string) => values[name]!);
  const template = (relative: string) => readFile(new URL(relative, TEMPLATES), 'utf8');
  const kindDir = options.kind;

  const manifest = {
    name: packageName,
    version: '0.1.0',
    description: `agent-host plugin: ${kind.summary}`,
    type: 'module',
    main: './dist/index.js',
    types: './dist/index.d.ts',
    exports: { '.': { types: './dist/index.d.ts', default: './dist/index.js' }, './package.json': './package.json' },
    files: ['dist'],
    engines: { node: '>=20' },
    agentHost: { id: options.id, sdk: sdkRange, description: kind.summary, contributes: { [kind.point]: [key] } },
    scripts: {
      build: 'tsc -p .',
      test: 'tsc -p . && tsc -p test && node --test dist-test/plugin.test.js',
    },
    peerDependencies: { '@agent-host/sdk': sdkRange },
    devDependencies: { '@agent-host/sdk': options.sdk ?? sdkRange, ...DEV_DEPENDENCIES },
  };
  const files: Record<string, string> = {
    'package.json': JSON.stringify(manifest, null, 2) + '\n',
    'tsconfig.json': await template('common/tsconfig.json'),
    'test/tsconfig.json': await template('common/test/tsconfig.json'),
    '.gitignore': await template('common/gitignore'),
    'README.md': fill(await template('common/README.md')),
    'src/index.ts': fill(await template(`${kindDir}/src/index.ts`)),
    'test/plugin.test.ts': fill((await template('common/test/header.ts')) + (await template(`${kindDir}/test/plugin.test.ts`))),
  };
  for (const [relative, content] of Object.entries(files)) {
    const target = path.join(options.directory, relative);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, content);
  }
  return Object.keys(files);
}
