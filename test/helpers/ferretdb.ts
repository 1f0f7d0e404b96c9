// A FerretDB server (MongoDB wire protocol over SQLite) for one test: the binary the harness built
// (TEST_FERRETDB_BIN), a temporary SQLite directory, stopped when the test ends.
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedFerretDb } from '@agent-host/core';

interface TapLike {
  teardown(fn: () => Promise<void> | void): void;
}

function ferretDbBinary(): string {
  const bin = process.env.TEST_FERRETDB_BIN;
  if (!bin) {
    throw new Error(
      'TEST_FERRETDB_BIN is not set: the MongoDB job-store tests need the FerretDB binary that test/harness/run-tests.ts builds; run them through the harness (npm test)',
    );
  }
  if (!existsSync(bin)) throw new Error(`TEST_FERRETDB_BIN=${bin} does not exist`);
  return bin;
}

/** Starts FerretDB; resolves once it answers `ping`. */
export async function startFerretDb(t: TapLike, options: { extraArgs?: string[] } = {}): Promise<EmbeddedFerretDb> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'agent-host-ferretdb-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const server = new EmbeddedFerretDb({ binary: ferretDbBinary(), dataDir, extraArgs: options.extraArgs });
  t.teardown(() => server.stop());
  await server.start();
  return server;
}
