// Runs test files as Node processes with tsx, a few at once, and reports them as one TAP stream: each file's output
// as a subtest, in the order the files end. tap's own runner did this before; it also loads @tapjs/processinfo into
// every test process and, through NODE_OPTIONS, into every Node process a test starts, for coverage and `--changed`
// (which this suite uses neither of), and that cost about 2.5 s of CPU per test file (a quarter of a small file's).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

export interface TestRunOptions {
  /** Files relative to `root`. */
  files: string[];
  root: string;
  env: NodeJS.ProcessEnv;
  /** Files running at once. */
  jobs: number;
  /** A file's time limit in seconds, which the file may change for itself (tap's `t.setTimeout` on its root). */
  timeoutSeconds: number;
  write: (text: string) => void;
}

interface FileResult {
  ok: boolean;
  output: string;
  milliseconds: number;
  /** Why the file failed when its own output does not say: its exit code, its signal, its time limit. */
  failure?: Record<string, string | number>;
  /** The file's own counts of test points (total, pass, fail, skip, todo), from its last `# { total: ... }` line. */
  counts: Record<string, number>;
}

/** The test processes running now: a run that is stopped (SIGINT, SIGTERM) passes the signal on to them. */
const running = new Set<ChildProcess>();

/** Runs one test file; resolves when its process has ended. */
function runFile(file: string, options: TestRunOptions): Promise<FileResult> {
  const started = Date.now();
  const child = spawn(process.execPath, ['--import=tsx', '--no-deprecation', file], {
    cwd: options.root,
    // TAP=1 makes tap print plain TAP, as it does under its own runner; tap times out a file's root test itself.
    env: { ...options.env, TAP: '1', TAP_TIMEOUT: String(options.timeoutSeconds) },
    // The channel is how tap's root tells its runner of a time limit the file set for itself (`t.setTimeout`).
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  running.add(child);
  let output = '';
  let timedOut = false;
  let limit: NodeJS.Timeout | undefined;
  // A file past its limit is asked (SIGALRM, which tap answers with what was still running) and then made to stop.
  const arm = (seconds: number) => {
    clearTimeout(limit);
    limit = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGALRM');
        setTimeout(() => child.kill('SIGKILL'), 2_000).unref();
      },
      // tap's own timer in the file goes first; this one is for a file whose event loop is stuck.
      seconds * 1000 + 10_000,
    );
  };
  arm(options.timeoutSeconds);
  child.on('message', (message: { setTimeout?: unknown }) => {
    if (typeof message.setTimeout === 'number') arm(message.setTimeout / 1000);
  });
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (chunk: string) => (output += chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      running.delete(child);
      clearTimeout(limit);
      const summary = [...output.matchAll(/^# \{ (total: .*) \}$/gm)].at(-1)?.[1] ?? '';
      const failure = timedOut ? { timeout: 'the file ran past its time limit' } : code !== 0 ? { exitCode: code ?? -1, signal: signal ?? '' } : undefined;
      resolve({
        ok: failure === undefined,
        output,
        milliseconds: Date.now() - started,
        failure,
        counts: Object.fromEntries([...summary.matchAll(/(\w+): (\d+)/g)].map(([, key, value]) => [key, Number(value)])),
      });
    });
  });
}

/** A file's result as a TAP subtest: its output indented under a `# Subtest` line, then its own test point. */
function subtest(index: number, file: string, result: FileResult): string {
  const body = result.output
    .split('\n')
    .filter((line) => !line.startsWith('TAP version'))
    .map((line) => (line ? `    ${line}` : line))
    .join('\n')
    .trimEnd();
  const diagnostics = result.failure
    ? `  ---\n${Object.entries(result.failure)
        .map(([key, value]) => `  ${key}: ${JSON.stringify(value)}`)
        .join('\n')}\n  ...\n`
    : '';
  return `# Subtest: ${file}\n${body}\n${result.ok ? 'ok' : 'not ok'} ${index} - ${file} # time=${result.milliseconds}ms\n${diagnostics}\n`;
}

/** Runs `files`, `jobs` at a time; resolves with 0 when every file passed, else 1. */
export async function runTestProcesses(options: TestRunOptions): Promise<number> {
  const started = Date.now();
  const queue = [...options.files];
  let ended = 0;
  let failed = 0;
  const counts: Record<string, number> = { total: 0, pass: 0 };
  options.write('TAP version 14\n');
  // A stopped run starts no more files, and ends when the running ones have (the caller then stops the servers).
  const stop = (signal: NodeJS.Signals) => {
    queue.length = 0;
    for (const child of running) child.kill(signal);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const worker = async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      const result = await runFile(path.normalize(file), options);
      for (const [key, value] of Object.entries(result.counts)) counts[key] = (counts[key] ?? 0) + value;
      if (!result.ok) failed++;
      // A file that failed without a failed point of its own (a crash, its time limit) counts as one.
      if (!result.ok && !result.counts.fail) counts.fail = (counts.fail ?? 0) + 1;
      options.write(subtest(++ended, file, result));
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.jobs, options.files.length) }, worker));
  const summary = Object.entries(counts)
    .map(([key, value]) => `${key}: ${value}`)
    .join(', ');
  options.write(`1..${ended}\n# { ${summary} }\n# time=${Date.now() - started}ms\n`);
  return failed > 0 ? 1 : 0;
}
