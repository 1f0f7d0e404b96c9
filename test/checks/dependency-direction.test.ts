// Guards ARCHITECTURE.md section 1: the import rules of .dependency-cruiser.cjs (plugins -> sdk <- core <- host,
// no cycles), and neither core nor host naming a plugin or an orchestrator key in code.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { configSchema } from '@agent-host/core';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : sourceFiles(full);
    return /\.(ts|mts|js|mjs)$/.test(name) ? [full] : [];
  });
}

const pluginDirs = readdirSync(path.join(root, 'plugins')).map((id) => path.join(root, 'plugins', id));
const pluginPackages = pluginDirs.map(
  (dir) =>
    JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name: string; agentHost: { id: string; contributes?: Record<string, string[]> } },
);

interface Violation {
  rule: { name: string };
  from: string;
  to: string;
  cycle?: { name: string }[];
}

/** dependency-cruiser over `paths` with a rules file: what it reports as broken. */
function violationsOf(paths: string[], config: string): Violation[] {
  const cli = path.join(root, 'node_modules', 'dependency-cruiser', 'bin', 'dependency-cruise.mjs');
  const run = spawnSync(process.execPath, [cli, ...paths, '--config', config, '--output-type', 'json'], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (!run.stdout) throw new Error(`dependency-cruiser gave no report: ${run.stderr}`);
  return (JSON.parse(run.stdout) as { summary: { violations: Violation[] } }).summary.violations;
}

const described = (v: Violation) => `${v.rule.name}: ${v.from} -> ${v.to}${v.cycle ? ` (cycle: ${v.cycle.map((c) => c.name).join(' -> ')})` : ''}`;

t.test(
  "imports keep the rules of .dependency-cruiser.cjs: no cycles, plugins -> sdk <- core <- host, host through core's entry, plugins through their package entries",
  async (t) => {
    t.same(violationsOf(['sdk/src', 'core/src', 'host/src', 'plugins', 'test', 'bench'], '.dependency-cruiser.cjs').map(described), []);
  },
);

t.test("a test that imports a plugin's sources breaks the rule; its package entry does not", async (t) => {
  const dir = mkdtempSync(path.join(root, 'test', '.plugin-imports-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(
    path.join(dir, 'inside.ts'),
    "import { ConnectionPool } from '../../plugins/tools-mcp/src/lib/pool.js';\nexport const pool = ConnectionPool;\n",
  );
  writeFileSync(path.join(dir, 'entry.ts'), "import toolsMcp from '@agent-host/plugin-tools-mcp';\nexport const plugin = toolsMcp;\n");
  const found = violationsOf([path.relative(root, dir)], '.dependency-cruiser.cjs').map(described);
  t.match(found, [/^only-a-plugin-imports-its-sources: test\/\.plugin-imports-\w+\/inside\.ts -> plugins\/tools-mcp\/src\/lib\/pool\.ts$/]);
  t.equal(found.length, 1, 'the package entry is allowed');
});

t.test('a cycle breaks the rule', async (t) => {
  const found = violationsOf(['test/fixtures/import-cycle'], 'test/fixtures/import-cycle/dependency-cruiser.cjs');
  t.match(found.map(described), [/^no-cycles: test\/fixtures\/import-cycle\/a\.ts -> test\/fixtures\/import-cycle\/b\.ts/]);
});

// A contributed key that is also a core config section (the `chroma` retriever, the `[chroma]` section) is a word core owns too,
// and so is a media type (a parser's `text/csv` is also what core's dataset import reads and its CSV export sends).
const coreSections = new Set(Object.keys(configSchema.shape));
const isMediaType = (key: string) => /^[a-z]+\/[\w.+-]+$/.test(key);

t.test('core and host never name a plugin, its package or an orchestrator key', async (t) => {
  const keys = pluginPackages
    .flatMap((p) => Object.values(p.agentHost.contributes ?? {}).flat())
    .filter((key) => key !== '*' && !coreSections.has(key) && !isMediaType(key));
  const names = [...pluginPackages.flatMap((p) => [p.agentHost.id, p.name]), ...keys];
  const offences: string[] = [];
  for (const dir of ['core', 'host']) {
    for (const file of sourceFiles(path.join(root, dir, 'src'))) {
      const source = readFileSync(file, 'utf8');
      for (const name of names)
        if (source.includes(`'${name}'`) || source.includes(`"${name}"`) || source.includes(`\`${name}\``))
          offences.push(`${path.relative(root, file)} names "${name}"`);
    }
  }
  t.same(offences, []);
});
