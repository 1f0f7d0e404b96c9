import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoBackend } from '@agendajs/mongo-backend';
import { Agenda } from 'agenda';

const port = await new Promise<number>((r) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => r(p)); }); });
const dir = mkdtempSync(path.join(os.tmpdir(), 'ferret-probe-'));
const child = spawn(process.env.BIN!, ['--handler=sqlite', `--sqlite-url=file:${dir}/`, `--listen-addr=127.0.0.1:${port}`, '--telemetry=disable', '--debug-addr=-', `--state-dir=${dir}`, '--log-level=' + (process.env.FLOG ?? 'WARN')], { stdio: ['ignore', 'inherit', 'inherit'] });
await new Promise((r) => setTimeout(r, 1000));
const agenda = new Agenda({ name: 'probe', backend: new MongoBackend({ address: `mongodb://127.0.0.1:${port}/agenda` }), processEvery: 200 });
agenda.on('error', (e) => console.log('AGENDA ERROR', e));
let ran = 0;
agenda.define('x', async (job) => { ran++; console.log('ran', job.attrs.data); });
agenda.define('f', async () => { throw new Error('boom'); });
try {
  await agenda.start();
  console.log('started');
  for (let i = 0; i < 3; i++) console.log('queued', String((await agenda.now('x', { i })).attrs._id));
  await agenda.now('f', {});
  await new Promise((r) => setTimeout(r, 2000));
  console.log('ran', ran);
  console.log(JSON.stringify((await agenda.queryJobs({})).jobs.map((j) => [j.name, j.failReason, j.lastFinishedAt])));
  await agenda.drain({ timeout: 1000 });
  await agenda.stop();
} catch (e) { console.log('FAILED', e); }
child.kill();
