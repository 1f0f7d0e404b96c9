// The floor of the schedule benchmark: Agenda alone (the version and Postgres backend the host uses, the same
// process_every and concurrency) running an empty job at each due time, in a database of its own on the host's
// Postgres. Run as a child of run.mjs (IPC): {type:'run', connectionString, dueTimes, processEveryMs, concurrency}
// answers {type:'done', lateness_ms[], started_at[], wall_ms} once every job ran.
import { PostgresBackend } from '@agendajs/postgres-backend';
import { Agenda } from 'agenda';
import pg from 'pg';

process.on('disconnect', () => process.exit(0));
process.on('message', async (message) => {
  if (message?.type !== 'run') return;
  try {
    const { connectionString, dueTimes, processEveryMs, concurrency } = message;
    const pool = new pg.Pool({ connectionString, max: 4 });
    const agenda = new Agenda({ name: 'floor', backend: new PostgresBackend({ pool }), processEvery: processEveryMs });
    const lateness = [];
    const started = [];
    let resolveAll;
    const all = new Promise((resolve) => (resolveAll = resolve));
    agenda.define(
      'empty',
      async (job) => {
        const now = Date.now();
        lateness.push(now - new Date(job.attrs.data.due_at).getTime());
        started.push(now);
        if (lateness.length === dueTimes.length) resolveAll();
      },
      { concurrency },
    );
    await agenda.ready;
    for (const due of dueTimes) await agenda.schedule(new Date(due), 'empty', { due_at: due });
    const t0 = Date.now();
    await agenda.start();
    await all;
    await agenda.stop();
    await pool.end();
    process.send({ type: 'done', lateness_ms: lateness, started_at: started, wall_ms: Date.now() - t0 });
  } catch (error) {
    process.send({ type: 'failed', error: String(error?.stack ?? error) });
  }
});
process.send({ type: 'listening' });
