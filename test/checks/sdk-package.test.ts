// @agent-host/sdk as a stranger gets it: the packed tarball's contents, and a README whose examples compile.
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

t.test('the packed SDK holds its code, types, README and API report', async (t) => {
  const [pack] = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json', '--workspace', '@agent-host/sdk'], { cwd: root, encoding: 'utf8' })) as {
    files: { path: string }[];
  }[];
  const files = pack!.files.map((f) => f.path);
  for (const file of [
    'dist/index.js',
    'dist/index.d.ts',
    'dist/testing/index.js',
    'dist/testing/index.d.ts',
    'dist/kernel/index.js',
    'README.md',
    'etc/sdk.api.md',
    'package.json',
  ])
    t.ok(files.includes(file), `${file} is in the tarball`);
  t.notOk(
    files.some((f) => f.startsWith('src/')),
    'sources stay out',
  );
});

t.test('every TypeScript example of sdk/README.md compiles against the SDK', async (t) => {
  const readme = await readFile(path.join(root, 'sdk', 'README.md'), 'utf8');
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  t.ok(blocks.length >= 6, 'the README has an example per extension point it names');
  // Inside the repository, so `@agent-host/sdk` resolves as it does for a plugin.
  const dir = await mkdtemp(path.join(root, '.sdk-readme-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await Promise.all(blocks.map((code, i) => writeFile(path.join(dir, `example-${i}.ts`), code)));
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: [] },
      include: ['*.ts'],
    }),
  );
  let output = '';
  try {
    execFileSync(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { encoding: 'utf8' });
  } catch (error) {
    output = (error as { stdout?: string }).stdout ?? String(error);
  }
  t.equal(output, '', 'tsc reports no errors');
});
