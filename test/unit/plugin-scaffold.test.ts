// `agent-host plugin new` refuses what would make a broken package, and writes a manifest that declares exactly the
// key its implementation registers, with the SDK as a peer and a devDependency.
import { SDK_VERSION } from '@agent-host/sdk';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import ts from 'typescript';
import { PLACEHOLDER, PLUGIN_KINDS, scaffoldPlugin } from '../../host/src/plugin-scaffold.js';

t.test('bad input is refused, saying what to do', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-scaffold-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await t.rejects(scaffoldPlugin({ id: 'Acme_Chat', kind: 'orchestrator', directory: path.join(dir, 'a') }), /must be kebab-case/);
  await t.rejects(
    scaffoldPlugin({ id: 'acme', kind: 'widget', directory: path.join(dir, 'b') }),
    /unknown kind "widget": choose one of orchestrator, tool-backend, tool-provider, skill-backend, retriever, embedder, parser, model-provider/,
  );
  await mkdir(path.join(dir, 'taken'));
  await writeFile(path.join(dir, 'taken', 'notes.txt'), 'mine');
  await t.rejects(scaffoldPlugin({ id: 'acme', kind: 'orchestrator', directory: path.join(dir, 'taken') }), /exists and is not empty/);
  t.equal(await readFile(path.join(dir, 'taken', 'notes.txt'), 'utf8'), 'mine', 'nothing was overwritten');
});

t.test('every kind: the manifest declares the key the implementation registers, and every placeholder is filled', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-scaffold-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const [major, minor] = SDK_VERSION.split('.');
  for (const kind of Object.keys(PLUGIN_KINDS)) {
    const target = path.join(dir, kind);
    const files = await scaffoldPlugin({ id: `acme-${kind}`, kind, directory: target });
    t.same(
      files.sort(),
      ['.gitignore', 'README.md', 'package.json', 'src/index.ts', 'test/plugin.test.ts', 'test/tsconfig.json', 'tsconfig.json'],
      `${kind}: a complete package`,
    );
    const manifest = JSON.parse(await readFile(path.join(target, 'package.json'), 'utf8'));
    const [[point, keys]] = Object.entries(manifest.agentHost.contributes) as [string, string[]][];
    const source = await readFile(path.join(target, 'src', 'index.ts'), 'utf8');
    t.match(source, `extensionPoints.${point}`, `${kind}: registers into ${point}`);
    t.ok(source.includes(`'${keys[0]}'`), `${kind}: registers the declared key ${keys[0]}`);
    t.same(
      [manifest.agentHost.sdk, manifest.peerDependencies['@agent-host/sdk'], manifest.devDependencies['@agent-host/sdk']],
      Array(3).fill(`^${major}.${minor}.0`),
      `${kind}: the SDK is a peer and a devDependency`,
    );
    t.ok(manifest.devDependencies.typescript, `${kind}: typescript is a devDependency`);
    for (const file of files)
      t.notMatch(await readFile(path.join(target, file), 'utf8'), new RegExp(PLACEHOLDER.source), `${kind}: ${file} has no placeholder left`);
    // The vendor path (test/e2e/vendor-plugin.test.ts) compiles and runs them; here, at least, they parse.
    for (const file of files.filter((f) => f.endsWith('.ts'))) {
      const { diagnostics } = ts.transpileModule(await readFile(path.join(target, file), 'utf8'), { reportDiagnostics: true, fileName: file });
      t.same(
        diagnostics?.map((d) => ts.flattenDiagnosticMessageText(d.messageText, ' ')),
        [],
        `${kind}: ${file} parses`,
      );
    }
  }
});
