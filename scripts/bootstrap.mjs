#!/usr/bin/env node
// The two commands of README.md: `npm start` and `npm test`. Uses only Node
// built-ins, so it runs before anything is installed: it installs what is
// missing, builds, then starts the host or the test suite.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const command = process.argv[2];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
/** What the linter reads: every package's TypeScript sources (the same list as `npm run lint`). */
const LINTED = ['sdk/src', 'core/src', 'host/src', 'plugins/*/src/**/*.ts', 'migrations/*.ts', 'console/src'];

function step(label, cmd, args) {
  const started = Date.now();
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: process.env });
  if (result.status !== 0) {
    process.stderr.write(`bootstrap: ${label} failed (${cmd} ${args.join(' ')})\n`);
    process.exit(result.status ?? 1);
  }
  process.stderr.write(`bootstrap: ${label} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
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
  step('install dependencies', npm, process.env.CI ? ['ci', '--no-audit', '--no-fund'] : ['install', '--no-audit', '--no-fund']);
}
// tap compiles its plugin set into node_modules; .taprc swaps its TypeScript plugin for tsx.
const tapMarker = path.join(root, 'node_modules', '.agent-host-tap-built');
if (
  command === 'test' &&
  (!existsSync(tapMarker) ||
    statSync(tapMarker).mtimeMs < statSync(path.join(root, '.taprc')).mtimeMs ||
    statSync(tapMarker).mtimeMs < statSync(path.join(root, 'node_modules', '.package-lock.json')).mtimeMs)
) {
  step('configure tap', process.execPath, [path.join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs'), 'build']);
  writeFileSync(tapMarker, new Date().toISOString() + '\n');
}
step('build', process.execPath, [path.join(root, 'scripts', 'build.mjs')]);
// The whole suite starts with the linter (eslint.config.js) and the format check (.prettierrc.json); a run of chosen
// test files does not.
if (command === 'test' && process.argv.length === 3) {
  step('lint', process.execPath, [path.join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), ...LINTED]);
  step('format check', process.execPath, [path.join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), '--check', '--log-level', 'warn', '.']);
}

const entry =
  command === 'start'
    ? [path.join(root, 'host', 'dist', 'cli.js'), 'start', ...process.argv.slice(3)]
    : ['--import', 'tsx', path.join(root, 'test', 'harness', 'run-tests.ts'), ...process.argv.slice(3)];
const child = spawn(process.execPath, ['--no-deprecation', ...entry], { cwd: root, stdio: 'inherit', env: process.env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
