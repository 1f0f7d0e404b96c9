import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { MongoClient } from 'mongodb';

const port = await new Promise<number>((r) => { const s = net.createServer().listen(0, '127.0.0.1', () => { const p = (s.address() as net.AddressInfo).port; s.close(() => r(p)); }); });
const dir = mkdtempSync(path.join(os.tmpdir(), 'ferret-probe-'));
const handler = process.env.HANDLER ?? 'sqlite';
const args = [`--handler=${handler}`, `--listen-addr=127.0.0.1:${port}`, '--telemetry=disable', '--debug-addr=-', `--state-dir=${dir}`, '--log-level=ERROR'];
if (handler === 'sqlite') args.push(`--sqlite-url=file:${dir}/${process.env.SQLITE_PARAMS ?? ''}`);
else args.push(`--postgresql-url=${process.env.PGURL}`);
const child = spawn(process.env.BIN!, args, { stdio: ['ignore', 'inherit', 'inherit'] });
await new Promise((r) => setTimeout(r, 1000));
const N = Number(process.env.N ?? 200), W = Number(process.env.W ?? 4);
const clients = await Promise.all(Array.from({ length: W }, () => MongoClient.connect(`mongodb://127.0.0.1:${port}/probe`)));
try {
  const c0 = clients[0]!.db().collection('jobs');
  await c0.deleteMany({});
  await c0.insertMany(Array.from({ length: N }, (_, i) => ({ seq: i, lockedAt: null, nextRunAt: new Date(Date.now() - 1000) })));
  const claims: Record<number, string[]> = {};
  await Promise.all(clients.map(async (cl, w) => {
    const c = cl.db().collection('jobs');
    for (;;) {
      const doc = await c.findOneAndUpdate({ lockedAt: { $eq: null }, nextRunAt: { $lte: new Date() } }, { $set: { lockedAt: new Date(), by: w } }, { returnDocument: 'after', sort: { nextRunAt: 1 } });
      if (!doc) break;
      (claims[doc.seq] ??= []).push(`w${w}`);
    }
  }));
  const total = Object.values(claims).reduce((a, b) => a + b.length, 0);
  const doubles = Object.entries(claims).filter(([, v]) => v.length > 1);
  console.log(`${handler}: docs=${N} workers=${W} claims=${total} distinct=${Object.keys(claims).length} double-claimed=${doubles.length}`, doubles.slice(0, 5));
} finally {
  await Promise.all(clients.map((c) => c.close()));
  child.kill();
}
