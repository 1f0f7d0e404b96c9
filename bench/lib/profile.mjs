// The host's CPU profile for a bench's `--profile`: node's own `--cpu-prof`, written when the host exits, and
// read back as self time per function and per package, so a note can name the hottest frames before and after.
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { resultsDir } from './host.mjs';

/** With `--profile` on the bench's command line, {@link cpuProfileArgs}; else `undefined`. */
export const requestedProfile = (name) => (process.argv.includes('--profile') ? cpuProfileArgs(name) : undefined);

/** A fresh `bench/results/<name>-prof` directory and the node arguments that write the host's profile into it. */
function cpuProfileArgs(name) {
  const dir = path.join(resultsDir, `${name}-prof`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return { dir, nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${dir}`] };
}

/** Where a frame's code lives: `node_modules/<package>`, `node:<module>` or the repository path, for grouping. */
function place(url) {
  if (!url) return '(native)';
  const modules = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (modules) return modules[1];
  if (url.startsWith('node:')) return url;
  return url.replace(/^file:\/\//, '').replace(/^.*?\/(core|host|sdk|plugins\/[^/]+)\/dist\//, '$1/');
}

/** Now on the clock V8's profiler stamps its samples with (CLOCK_MONOTONIC, microseconds), in any process of the machine. */
export const profileClockUs = () => Number(process.hrtime.bigint() / 1000n);

/**
 * Self time of the profile in `dir` (the host's one `.cpuprofile`): the `top` hottest functions and packages, each
 * `{name, ms, share}`, and the profile's total milliseconds. With `windows` (`[fromUs, toUs]` pairs of
 * {@link profileClockUs}), only the samples within them: the host under measured load, not its start or the
 * time it waited while a baseline was measured.
 */
export function hottest(dir, top = 10, windows = undefined) {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no .cpuprofile in ${dir}: did the host exit cleanly?`);
  const profile = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const byFunction = new Map();
  const byPlace = new Map();
  let total = 0;
  let at = profile.startTime;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (windows && !windows.some(([from, to]) => at >= from && at <= to)) return;
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const { functionName, url, lineNumber } = nodes.get(id).callFrame;
    total += ms;
    const where = place(url);
    const fn = `${functionName || '(anonymous)'} ${where}${url ? `:${lineNumber + 1}` : ''}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + ms);
    byPlace.set(where, (byPlace.get(where) ?? 0) + ms);
  });
  const ranked = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, ms]) => ({ name, ms: Math.round(ms), share: ms / total }));
  return { file: path.join(dir, file), windows: windows?.length ?? null, total_ms: Math.round(total), functions: ranked(byFunction), places: ranked(byPlace) };
}

/** Prints what `hottest` found, idle time included (a host waiting on its databases or the load generator). */
export function printHottest({ file, windows, total_ms, functions, places }) {
  const line = ({ name, ms, share }) => `  ${String(ms).padStart(7)} ms ${(share * 100).toFixed(1).padStart(5)} %  ${name}`;
  const within = windows ? `, within the host's ${windows} measured windows` : '';
  console.log(`\nhost CPU profile ${file} (${total_ms} ms sampled${within}); self time by function:`);
  functions.forEach((f) => console.log(line(f)));
  console.log('by package or file:');
  places.forEach((p) => console.log(line(p)));
}
