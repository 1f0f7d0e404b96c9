// Runs the test files given (the whole suite when none is), each in a process of its own (test/harness/test-processes.ts).
// A run that needs the shared services (one embedded Postgres server, one Chroma server, FerretDB and Schemathesis)
// starts them first and passes their addresses to the files in the environment (test/harness/shared-services.ts); a
// run of unit tests alone starts nothing and imports none of it. Options: `--jobs=N` files at once (3: the tests on
// 2 cores wait on servers and children often enough that a third keeps both busy), `--timeout=S` seconds per file
// (300, or TAP_TIMEOUT).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Parser, type Result } from 'tap-parser';
import { suiteFiles } from './test-files.js';
import { runTestProcesses } from './test-processes.js';

const PROJECT_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const args = process.argv.slice(2);
const option = (name: string, fallback: number) => Number(args.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const given = args.filter((arg) => !arg.startsWith('-'));
const files = given.length > 0 ? given : suiteFiles();

/** Runs the files with `env`; ends the report with the failures and one summary line, and resolves with the exit code. */
async function runFiles(env: NodeJS.ProcessEnv): Promise<number> {
  // Echo the report and end with the failures and a plain "N passed, N failed" line: a CI log shows its tail only.
  let tail = '';
  const failures = failureCollector();
  const code = await runTestProcesses({
    files,
    root: PROJECT_ROOT,
    env,
    jobs: option('jobs', 3),
    timeoutSeconds: option('timeout', Number(process.env.TAP_TIMEOUT ?? 300)),
    write: (text) => {
      process.stdout.write(text);
      failures.parser.write(text);
      tail = (tail + text).slice(-4000);
    },
  });
  failures.parser.end();
  const failed = failures.leaves();
  if (failed.length > 0) process.stdout.write(`\n# failed:\n${failed.map(describeFailure).join('\n')}\n`);
  const summary = [...tail.matchAll(/^# \{ (total: .*) \}$/gm)].at(-1)?.[1];
  const count = (key: string) => new RegExp(`\\b${key}: (\\d+)`).exec(summary ?? '')?.[1] ?? 0;
  if (summary) process.stdout.write(`\ntests: ${count('pass')} passed, ${count('fail')} failed\n`);
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

// Unit tests, repository checks, tests that run processes, and a plugin's tests outside its test/integration need
// no server: asked for them alone (`npm run test:unit`, or one such file), nothing is started.
const needsNoServer = (file: string) => /^test\/(unit|checks|process)\//.test(file) || /^plugins\/[^/]+\/test\/(?!integration\/)/.test(file);
if (files.every(needsNoServer)) process.exit(await runFiles(process.env));

const { runWithSharedServices } = await import('./shared-services.js');
process.exit(await runWithSharedServices(runFiles));
