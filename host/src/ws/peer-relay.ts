import type { SessionBroadcast } from '@agent-host/core';
import type { Adapter } from 'socket.io-adapter';

/** How often the Postgres adapter announces this instance to the others (its heartbeat). */
export const HEARTBEAT_INTERVAL_MS = 5_000;
/**
 * A new instance accepts sockets only this long after announcing itself, so
 * that the instances already running have heard of it before any of its
 * sockets joins a room and stop skipping the relay.
 */
export const ANNOUNCE_GRACE_MS = 1_000;

/**
 * Sends a session broadcast to the other instances only when there are any:
 * each relay is a Postgres NOTIFY that every instance, this one included,
 * receives and parses, and on a single instance that was two of a chat turn's
 * four statements. Peers are known from the adapter's heartbeats (any message of
 * theirs counts); until this instance has listened for a whole heartbeat
 * interval it may not have heard every peer yet, so it relays everything.
 * Broadcasts keep their order: each waits for the peer count in turn.
 */
export function peerRelay(
  adapter: Adapter,
  relay: (broadcast: SessionBroadcast) => void,
  now: () => number = Date.now,
): (broadcast: SessionBroadcast) => Promise<void> {
  const started = now();
  return async (broadcast) => {
    const peers = (await adapter.serverCount()) - 1;
    if (peers > 0 || now() - started < HEARTBEAT_INTERVAL_MS + ANNOUNCE_GRACE_MS) relay(broadcast);
  };
}
