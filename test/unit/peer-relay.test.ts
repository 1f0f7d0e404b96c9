import t from 'tap';
import type { SessionBroadcast } from '@agent-host/core';
import type { Adapter } from 'socket.io-adapter';
import { ANNOUNCE_GRACE_MS, HEARTBEAT_INTERVAL_MS, peerRelay } from '../../host/src/ws/peer-relay.js';

t.test('an instance relays everything until it has listened a whole heartbeat, then only while it knows a peer', async (t) => {
  let servers = 1;
  let clock = 0;
  const sent: string[] = [];
  const adapter = { serverCount: async () => servers } as unknown as Adapter;
  const relay = peerRelay(
    adapter,
    (b) => sent.push(b.session_id),
    () => clock,
  );
  const broadcast = (session_id: string) => ({ type: 'session', session_id }) as unknown as SessionBroadcast;

  await relay(broadcast('starting'));
  clock = HEARTBEAT_INTERVAL_MS + ANNOUNCE_GRACE_MS - 1;
  await relay(broadcast('still starting'));
  clock += 1;
  await relay(broadcast('alone'));
  servers = 2;
  await relay(broadcast('with a peer'));
  t.same(sent, ['starting', 'still starting', 'with a peer']);
});

t.test('broadcasts are relayed in the order they were published', async (t) => {
  const sent: number[] = [];
  const relay = peerRelay({ serverCount: async () => 2 } as unknown as Adapter, (b) => sent.push(Number(b.session_id)));
  await Promise.all([1, 2, 3, 4].map((n) => relay({ type: 'session', session_id: String(n) } as unknown as SessionBroadcast)));
  t.same(sent, [1, 2, 3, 4]);
});
