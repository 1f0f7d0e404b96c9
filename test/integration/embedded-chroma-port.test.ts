// The embedded Chroma asks the OS for a free port and then starts on it; on a busy machine another process can bind
// that port in between (a CI run saw "Address 127.0.0.1:43691 is not available"). It tries another port then.
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { cacheDir, createRootLogger, EmbeddedChroma, ensureChromaVenv } from '@agent-host/core';
import t from 'tap';
import { freePort } from '../../core/src/infra/process/free-port.js';

t.test('a port taken between choosing it and starting Chroma on it: Chroma starts on another', async (t) => {
  const logger = createRootLogger('silent');
  const executable = await ensureChromaVenv({ cacheDir: cacheDir(''), version: '1.5.9', python: 'python3', logger });
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-chroma-port-'));
  // It hangs up on every connection, so the start-up's heartbeats to its port end at once.
  const squatter = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const taken = (squatter.address() as net.AddressInfo).port;

  const offered: number[] = [];
  const chroma = new EmbeddedChroma({
    executable,
    dataDir,
    startupTimeoutMs: 120_000,
    logger,
    port: async () => {
      offered.push(offered.length === 0 ? taken : await freePort());
      return offered.at(-1)!;
    },
  });
  // One teardown, in order: the server before its data directory, and the squatter last.
  t.teardown(async () => {
    await chroma.stop();
    await rm(dataDir, { recursive: true, force: true });
    await new Promise<void>((resolve) => squatter.close(() => resolve()));
  });
  await chroma.start();
  t.equal(offered.length, 2, 'the taken port was given up for a second one');
  t.equal(new URL(chroma.url()).port, String(offered[1]), 'Chroma serves on the second port');
  t.ok((await fetch(new URL('/api/v2/heartbeat', chroma.url()))).ok, 'and answers there');
});
