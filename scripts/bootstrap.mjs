#!/usr/bin/env node
// The two commands of README.md: `npm start` and `npm test`. Uses only Node
// built-ins, so it runs before anything is installed: it installs what is
// missing, builds, then starts the host or the test suite.
import { spawn } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const command = process.argv[2];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** What the linter reads: every package's TypeScript sources (the same list as `npm run lint`). */
const LINTED = ['sdk/src', 'core/src', 'host/src', 'plugins/*/src/**/*.ts', 'migrations/*.ts', 'console/src'];

/** Runs steps (`[label, cmd, args]`) at once; when one fails, the bootstrap ends with its status once all have ended. */
async function steps(...list) {
  const ended = await Promise.all(
    list.map(
      ([label, cmd, args]) =>
        new Promise((resolve) => {
          const started = Date.now();
          spawn(cmd, args, { cwd: root, stdio: 'inherit', env: process.env })
            .on('error', () => resolve({ label, cmd, args, status: 1 }))
            .on('close', (status) => {
              if (status === 0) process.stderr.write(`bootstrap: ${label} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
              resolve({ label, cmd, args, status });
            });
        }),
    ),
  );
  const failed = ended.find((step) => step.status !== 0);
  if (failed) {
    process.stderr.write(`bootstrap: ${failed.label} failed (${failed.cmd} ${failed.args.join(' ')})\n`);
    process.exit(failed.status ?? 1);
  }
}

function dependenciesStale() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  if (!existsSync(marker)) return true;
  const installed = statSync(marker).mtimeMs;
  return ['package.json', 'package-lock.json'].some((f) => statSync(path.join(root, f)).mtimeMs > installed);
}

if (!['start', 'test'].includes(command)) {
  process.stderr.write('usage: node scripts/bootstrap.mjs start|test\n');
  process.exit(2);
}
if (dependenciesStale()) {
  await steps(['install dependencies', npm, process.env.CI ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund']]);
}
// tap compiles its plugin set into node_modules; .taprc swaps its TypeScript plugin for tsx.
const tapMarker = path.join(root, 'node_modules', '.agent-host-tap-built');
if (
  command === 'test' &&
  (!existsSync(tapMarker) ||
    statSync(tapMarker).mtimeMs < statSync(path.join(root, '.taprc')).mtimeMs ||
    statSync(tapMarker).mtimeMs < statSync(path.join(root, 'node_modules', '.package-lock.json')).mtimeMs)
) {
  await steps(['configure tap', process.execPath, [path.join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs'), 'build']]);
  writeFileSync(tapMarker, new Date().toISOString() + '\n');
}
// The whole suite starts with the linter (eslint.config.js) and the format check (.prettierrc.json); a run of chosen
// test files does not. The format check reads no built file, so it runs beside the build (each mostly on one core);
// the linter's type-aware rules read the built packages' types.
const wholeSuite = command === 'test' && process.argv.length === 3;
await steps(
  ['build', process.execPath, [path.join(root, 'scripts', 'build.mjs')]],
  ...(wholeSuite
    ? [['format check', process.execPath, [path.join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), '--check', '--log-level', 'warn', '.']]]
    : []),
);
if (wholeSuite) await steps(['lint', process.execPath, [path.join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), ...LINTED]]);

const entry =
  command === 'start'
    ? [path.join(root, 'host', 'dist', 'cli.js'), 'start', ...process.argv.slice(3)]
    : ['--import', 'tsx', path.join(root, 'test', 'harness', 'run-tests.ts'), ...process.argv.slice(3)];
const child = spawn(process.execPath, ['--no-deprecation', ...entry], { cwd: root, stdio: 'inherit', env: process.env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
