import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';

const port = await new Promise<number>((r) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => r(p)); }); });
const dir = mkdtempSync(path.join(os.tmpdir(), 'ferret-probe-'));
const child = spawn(process.env.BIN!, [`--handler=${process.env.HANDLER ?? 'sqlite'}`, `--sqlite-url=file:${dir}/`, `--listen-addr=127.0.0.1:${port}`, '--telemetry=disable', '--debug-addr=-', `--state-dir=${dir}`, '--log-level=ERROR'], { stdio: ['ignore', 'inherit', 'inherit'] });
await new Promise((r) => setTimeout(r, 800));
const client = await MongoClient.connect(`mongodb://127.0.0.1:${port}/probe`);
const c = client.db().collection('t');
try {
  const now = new Date();
  await c.insertOne({ name: 'x', lockedAt: null, disabled: null, nextRunAt: new Date(now.getTime() - 1000), priority: 0 });
  const later = new Date(now.getTime() + 5000);
  const dead = new Date(now.getTime() - 600000);
  const q = async (label: string, filter: any) => console.log(label, (await c.find(filter).toArray()).length);
  await q('all', {});
  await q('name', { name: 'x' });
  await q('lockedAt $eq null', { lockedAt: { $eq: null } });
  await q('lockedAt null', { lockedAt: null });
  await q('disabled $ne true', { disabled: { $ne: true } });
  await q('nextRunAt $lte', { nextRunAt: { $lte: later } });
  await q('lockedAt $lte dead', { lockedAt: { $lte: dead } });
  await q('$or', { $or: [{ lockedAt: { $eq: null }, nextRunAt: { $lte: later } }, { lockedAt: { $lte: dead } }] });
  const full = { name: 'x', disabled: { $ne: true }, $or: [{ lockedAt: { $eq: null }, nextRunAt: { $lte: later } }, { lockedAt: { $lte: dead } }] };
  await q('full', full);
  try {
    const r = await c.findOneAndUpdate(full, { $set: { lockedAt: new Date(), lastModifiedBy: null } }, { returnDocument: 'after', sort: { nextRunAt: 1, priority: -1 } });
    console.log('findOneAndUpdate', r);
  } catch (e) { console.log('findOneAndUpdate error', e); }
  try {
    const r = await c.findOneAndUpdate({ name: 'x' }, { $set: { progress: 1 } }, { returnDocument: 'after' });
    console.log('findOneAndUpdate simple', r);
  } catch (e) { console.log('simple error', e); }
} finally {
  await client.close();
  child.kill();
}
