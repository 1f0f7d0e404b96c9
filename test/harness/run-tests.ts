// Runs tap over the test files given (all of them when none is). A run that needs the shared services (one embedded
// Postgres server, one Chroma server, FerretDB and Schemathesis) starts them first and passes their addresses to tap in
// the environment (test/harness/shared-services.ts); a run of unit tests alone starts nothing and imports none of it.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser, type Result } from 'tap-parser';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs tap over the arguments given, with `env`; ends its report with one summary line and resolves with its exit code. */
async function runTap(env: NodeJS.ProcessEnv): Promise<number> {
  const tap = spawn(process.execPath, [path.join(PROJECT_ROOT, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs'), ...process.argv.slice(2)], {
    cwd: PROJECT_ROOT,
    stdio: ['inherit', 'pipe', 'inherit'],
    env,
  });
  // Echo tap's report and end with the failures and a plain "N passed, N failed" line: a CI log shows its tail only.
  let tail = '';
  const failures = failureCollector();
  tap.stdout!.on('data', (chunk: Buffer) => {
    process.stdout.write(chunk);
    failures.parser.write(chunk);
    tail = (tail + chunk.toString()).slice(-4000);
  });
  const stop = (signal: NodeJS.Signals) => tap.kill(signal);
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const code = await new Promise<number>((resolve) => tap.on('close', (c) => resolve(c ?? 1)));
  failures.parser.end();
  const failed = failures.leaves();
  if (failed.length > 0) process.stdout.write(`\n# failed:\n${failed.map(describeFailure).join('\n')}\n`);
  const summary = [...tail.matchAll(/# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?/g)].at(-1);
  if (summary) process.stdout.write(`\ntests: ${summary[2] ?? 0} passed, ${summary[3] ?? 0} failed\n`);
  return code;
}

/** Collects every failed test point of a TAP stream, in subtests too. */
function failureCollector() {
  const parser = new Parser();
  const failed: Result[] = [];
  const watch = (p: Parser) => {
    p.on('assert', (result: Result) => {
      if (!result.ok && !result.todo && !result.skip) failed.push(result);
    });
    p.on('child', watch);
  };
  watch(parser);
  // A failed subtest is also a failed point of its parent; only the innermost names what broke.
  const leaves = () => failed.filter((r) => !failed.some((other) => other !== r && other.fullname.startsWith(`${r.fullname} > `)));
  return { parser, leaves };
}

/** One failure as its full name and the diagnostics tap gave it, cut short so several fit in a CI log's tail. */
function describeFailure(result: Result): string {
  const { source: _source, ...diag } = result.diag ?? {};
  const shown = Object.keys(diag).length > 0 ? JSON.stringify(diag).slice(0, 600) : '';
  return `#   ${result.fullname}${shown ? `\n#     ${shown}` : ''}`;
}

const files = process.argv.slice(2).filter((arg) => !arg.startsWith('-'));
// Unit tests, repository checks, tests that run processes, and a plugin's tests outside its test/integration need
// no server: asked for them alone (`npm run test:unit`, or one such file), nothing is started.
const needsNoServer = (file: string) => /^test\/(unit|checks|process)\//.test(file) || /^plugins\/[^/]+\/test\/(?!integration\/)/.test(file);
if (files.length > 0 && files.every(needsNoServer)) process.exit(await runTap(process.env));

const { runWithSharedServices } = await import('./shared-services.js');
process.exit(await runWithSharedServices(runTap));
