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

/**
 * Starts a step (`label`, `cmd`, `args`): `ended` resolves with its exit status. With `toStderr` its output goes to
 * stderr, beside a test run's TAP on stdout.
 */
function start(label, cmd, args, { toStderr = false } = {}) {
  const started = Date.now();
  const child = spawn(cmd, args, { cwd: root, stdio: toStderr ? ['ignore', 2, 2] : 'inherit', env: process.env });
  const ended = new Promise((resolve) => {
    child.on('error', () => resolve({ label, cmd, args, status: 1 }));
    child.on('close', (status) => {
      if (status === 0) process.stderr.write(`bootstrap: ${label} done in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
      resolve({ label, cmd, args, status });
    });
  });
  return { child, ended };
}

/** Ends the bootstrap with the status of the first step of `ended` that failed, naming it; returns when none did. */
function exitOnFailure(ended) {
  const failed = ended.find((step) => step.status !== 0);
  if (failed) {
    process.stderr.write(`bootstrap: ${failed.label} failed (${failed.cmd} ${failed.args.join(' ')})\n`);
    process.exit(failed.status ?? 1);
  }
}

/** Runs steps (`[label, cmd, args]`) at once; when one fails, the bootstrap ends with its status once all have ended. */
async function steps(...list) {
  exitOnFailure(await Promise.all(list.map(([label, cmd, args]) => start(label, cmd, args).ended)));
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
// The whole suite runs the format check (.prettierrc.json) and the linter (eslint.config.js); a run of chosen test
// files does not. The format check reads no built file, so it runs beside the build; the linter's type-aware rules
// read the built packages' types, so it runs after the build, beside the tests (each of these is mostly on one of
// the two cores): its findings reach stderr when it ends, and the run fails once the tests have ended.
const wholeSuite = command === 'test' && process.argv.length === 3;
await steps(
  ['build', process.execPath, [path.join(root, 'scripts', 'build.mjs')]],
  ...(wholeSuite
    ? [['format check', process.execPath, [path.join(root, 'node_modules', 'prettier', 'bin', 'prettier.cjs'), '--check', '--log-level', 'warn', '.']]]
    : []),
);
const lint = wholeSuite
  ? start('lint', process.execPath, [path.join(root, 'node_modules', 'eslint', 'bin', 'eslint.js'), ...LINTED], { toStderr: true })
  : undefined;

const entry =
  command === 'start'
    ? [path.join(root, 'host', 'dist', 'cli.js'), 'start', ...process.argv.slice(3)]
    : ['--import', 'tsx', path.join(root, 'test', 'harness', 'run-tests.ts'), ...process.argv.slice(3)];
const child = spawn(process.execPath, ['--no-deprecation', ...entry], { cwd: root, stdio: 'inherit', env: process.env });
for (const signal of ['SIGINT', 'SIGTERM'])
  process.on(signal, () => {
    child.kill(signal);
    lint?.child.kill(signal);
  });
child.on('exit', async (code, signal) => {
  if (lint) exitOnFailure([await lint.ended]);
  process.exit(code ?? (signal ? 1 : 0));
});
