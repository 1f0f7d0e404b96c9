import http from 'node:http';
import t from 'tap';
import { closeHttpServer } from '../../host/src/shutdown.js';

async function serve(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}/` };
}

t.test('open requests finish during shutdown, and new connections are refused', async (t) => {
  const { server, url } = await serve((_req, res) => {
    res.write('first ');
    setTimeout(() => res.end('last'), 300);
  });
  const open = fetch(url).then((r) => r.text());
  await new Promise((r) => setTimeout(r, 50));
  const closing = closeHttpServer(server, 5000);
  await t.rejects(fetch(url), 'a new connection is refused once shutdown starts');
  t.equal(await open, 'first last', 'the open response completes');
  await closing;
});

t.test('requests still open at the timeout are cut so shutdown finishes', async (t) => {
  const { server, url } = await serve((_req, res) => res.write('never ends'));
  const open = fetch(url).then((r) => r.text());
  await new Promise((r) => setTimeout(r, 50));
  const started = Date.now();
  await closeHttpServer(server, 200);
  const took = Date.now() - started;
  t.ok(took >= 180 && took < 2000, `shutdown waited for the timeout, then closed (took ${took} ms)`);
  await t.rejects(open, 'the cut request fails on the client');
});

t.test('a keep-alive client does not hold shutdown open after its response', async (t) => {
  const { server, url } = await serve((_req, res) => setTimeout(() => res.end('done'), 100));
  const open = fetch(url).then((r) => r.text());
  await new Promise((r) => setTimeout(r, 20));
  const started = Date.now();
  await closeHttpServer(server, 5000);
  t.equal(await open, 'done');
  t.ok(Date.now() - started < 1000, `shutdown ends right after the last response (took ${Date.now() - started} ms)`);
});
