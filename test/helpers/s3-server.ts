// A real S3-compatible server for tests: s3rver (the maintained
// @20minutes/s3rver fork, a root devDependency), in this process, on a free
// loopback port, keeping its objects in a temporary directory. It checks
// SigV4 signatures, presigned URLs included, against its one account.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import S3rver from '@20minutes/s3rver';

/** s3rver's built-in account. */
export const S3_ACCESS_KEY = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface S3Server {
  /** `http://127.0.0.1:<port>`: the endpoint the host uses. */
  endpoint: string;
  /** `http://localhost:<port>`: the same server under another host name, as a public endpoint would be. */
  publicEndpoint: string;
  bucket: string;
}

/** Starts s3rver with one bucket; stopped and deleted when the test ends. */
export async function startS3Server(t: { teardown(fn: () => Promise<void>): void }, bucket = 'agent-host-test'): Promise<S3Server> {
  const directory = await mkdtemp(path.join(os.tmpdir(), 'agent-host-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = (await server.run()) as { port: number };
  t.teardown(async () => {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  });
  return { endpoint: `http://127.0.0.1:${port}`, publicEndpoint: `http://localhost:${port}`, bucket };
}
