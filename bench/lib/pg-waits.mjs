// What the host's Postgres backends do while a bench measures, for `--pg-waits`: `pg_stat_activity` sampled every few
// milliseconds, each active backend counted by what it waits on (a row lock, the WAL flush, the client) or running,
// and by the statement it runs. The CPU figures say how much Postgres a turn costs; this says where its time goes.
import { hostDatabase, sleep } from './host.mjs';
import { fmt, markdownTable } from './stats.mjs';

const SAMPLE = `SELECT COALESCE(wait_event_type || ':' || wait_event, 'running') AS wait,
    left(regexp_replace(query, '\\s+', ' ', 'g'), 60) AS statement
  FROM pg_stat_activity
  WHERE datname = current_database() AND backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid()`;

/**
 * Starts sampling the host's database every `everyMs` while a window is open (`open(label)` ... `close()`), on a
 * connection of its own. Each sample is a query: every 5 ms, they cost Postgres about a tenth of a CPU, which the
 * bench's Postgres CPU figures then include. Ask for it only when its answer is wanted.
 */
export async function startPgWaits(host, everyMs = 5) {
  const db = await hostDatabase(host);
  const windows = new Map();
  let current = null;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const window = current;
      if (window) {
        const { rows } = await db.query(SAMPLE);
        window.samples++;
        for (const { wait, statement } of rows) {
          const key = `${wait}\u0000${statement}`;
          window.counts.set(key, (window.counts.get(key) ?? 0) + 1);
        }
      }
      await sleep(everyMs);
    }
  })();
  return {
    /** Samples count toward `label` until `close` (a label opened again adds to its earlier windows). */
    open(label) {
      if (!windows.has(label)) windows.set(label, { samples: 0, counts: new Map() });
      current = windows.get(label);
    },
    close() {
      current = null;
    },
    /**
     * Per label, the `top` (wait, statement) pairs by how many backends were in them on average (`backends`), and
     * their share of all the backend time sampled in that label's windows.
     */
    report(top = 6) {
      return Object.fromEntries(
        [...windows].map(([label, { samples, counts }]) => {
          const busy = [...counts.values()].reduce((a, b) => a + b, 0);
          const rows = [...counts]
            .sort((a, b) => b[1] - a[1])
            .slice(0, top)
            .map(([key, n]) => {
              const [wait, statement] = key.split('\u0000');
              return { wait, statement, backends: n / Math.max(samples, 1), share: n / Math.max(busy, 1) };
            });
          return [label, { samples, active_backends: busy / Math.max(samples, 1), rows }];
        }),
      );
    },
    async stop() {
      stopped = true;
      await loop;
      await db.end();
    },
  };
}

/** {@link startPgWaits}'s `report()` as a Markdown table, a label's rows together. */
export function pgWaitsTable(report) {
  return markdownTable(
    "What the host's Postgres backends did during its measured windows (pg_stat_activity every 5 ms): backends in each state on average, and their share of the backends' sampled time",
    ['window', 'active backends', 'wait (running: on a CPU or ready for one)', 'statement', 'backends', 'share'],
    Object.entries(report).flatMap(([label, { active_backends, rows }]) =>
      rows.map((r, i) => [
        i === 0 ? label : '',
        i === 0 ? fmt(active_backends, 2) : '',
        r.wait,
        `\`${r.statement.replace(/\|/g, '\\|')}\``,
        fmt(r.backends, 2),
        `${fmt(r.share * 100, 1)} %`,
      ]),
    ),
  );
}
