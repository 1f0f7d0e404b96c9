// The harness's runner (test/harness/test-processes.ts): each file a process of its own, reported as one TAP stream
// whose failures, crashes and time limits fail the run and are named.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { Parser } from 'tap-parser';
import { runTestProcesses } from '../harness/test-processes.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const FILES = {
  'passes.test.ts': "import t from 'tap';\nt.pass('one');\nt.pass('two');\n",
  'fails.test.ts': "import t from 'tap';\nt.pass('fine');\nt.equal(1, 2, 'one is two');\n",
  'crashes.test.ts': "import t from 'tap';\nt.pass('before');\nprocess.exit(3);\n",
  'hangs.test.ts': "import t from 'tap';\nt.test('waits', () => new Promise(() => setInterval(() => {}, 1000)));\n",
  'longer.test.ts':
    "import t from 'tap';\nt.setTimeout(30_000);\nt.test('sleeps', async (t) => { await new Promise((r) => setTimeout(r, 3_000)); t.pass('slept'); });\n",
};

/** Runs `names` of FILES with a 1 s limit per file; the report, the exit code and the parsed results per file. */
async function run(t: Parameters<Parameters<typeof t.test>[1]>[0], names: (keyof typeof FILES)[]) {
  // Under the repository, so the files import its tap, but outside the folders test-files.test.ts reads.
  await mkdir(path.join(root, 'node_modules', '.cache'), { recursive: true });
  const dir = await mkdtemp(path.join(root, 'node_modules', '.cache', 'test-processes-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  for (const name of names) await writeFile(path.join(dir, name), FILES[name]);
  let report = '';
  const code = await runTestProcesses({
    files: names.map((name) => path.relative(root, path.join(dir, name))),
    root,
    env: process.env,
    jobs: names.length,
    timeoutSeconds: 1,
    write: (text) => (report += text),
  });
  const files = new Map<string, boolean>();
  const parser = new Parser();
  parser.on('assert', (result: { name: string; ok: boolean }) => files.set(path.basename(result.name), result.ok));
  parser.end(report);
  return { code, report, files };
}

t.test('passing files pass, their points summed', async (t) => {
  const { code, report, files } = await run(t, ['passes.test.ts', 'longer.test.ts']);
  t.equal(code, 0);
  t.same(Object.fromEntries(files), { 'passes.test.ts': true, 'longer.test.ts': true }, 'each file is a test point of the stream');
  t.match(report, /^# \{ total: 3, pass: 3 \}$/m, 'the points of both files');
  t.match(report, /# Subtest: .*longer\.test\.ts\n {4}# Subtest: sleeps\n {8}ok 1 - slept/, "a file's output is indented under it");
});

t.test('a failed point, a crash and a file past its limit each fail the run', async (t) => {
  const { code, report, files } = await run(t, ['passes.test.ts', 'fails.test.ts', 'crashes.test.ts', 'hangs.test.ts']);
  t.equal(code, 1);
  t.same(Object.fromEntries(files), { 'passes.test.ts': true, 'fails.test.ts': false, 'crashes.test.ts': false, 'hangs.test.ts': false });
  t.match(report, /not ok 2 - one is two/, 'the failed point is in the report');
  t.match(report, /crashes\.test\.ts # time=\d+ms\n  ---\n  exitCode: 3/, 'a crash says its exit code');
  t.match(report, /hangs\.test\.ts # time=\d+ms\n(  .*\n)*  (timeout|exitCode)/, 'a hang past its limit is stopped and says so');
  t.match(report, /fail: [2-9]/, 'and the failures are counted');
});
