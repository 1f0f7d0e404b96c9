import t from 'tap';
import type { AdminPrincipal, SessionBroadcast } from '@agent-host/core';
import type { Socket } from 'socket.io';
import { RoomFanOut } from '../../host/src/ws/fan-out.js';

/** Sockets of one session in two namespaces, recording what each namespace emits to whom. */
function room() {
  const sent: string[] = [];
  const namespace = (name: string) => ({ local: { to: (ids: string[]) => ({ emit: (type: string) => sent.push(`${name} ${ids.join(',')} ${type}`) }) } });
  const [customers, admins] = [namespace('/public/ws/s'), namespace('/ws/s')];
  const socket = (id: string, principal?: Partial<AdminPrincipal>) =>
    ({
      id,
      nsp: principal ? admins : customers,
      data: { sessionId: 's', principal },
      disconnected: false,
      once: () => undefined,
      emit: (type: string, payload: { code?: string }) => sent.push(`${id} ${type} ${payload.code}`),
      disconnect: () => undefined,
    }) as unknown as Socket;
  return { sent, socket };
}

const message = (n: number) => ({ type: 'message', session_id: 's', message: { content: String(n) } }) as unknown as SessionBroadcast;

t.test("customers' sockets are sent to at once; operators' once their administrator is re-read", async (t) => {
  const { sent, socket } = room();
  let check!: (principal: AdminPrincipal | undefined) => void;
  const fanOut = new RoomFanOut(
    () => new Promise((resolve) => (check = resolve)),
    (error) => t.error(error),
  );
  const operator = { session_id: 'admin-session', permissions: ['conversations.read'] };
  for (const s of [socket('c1'), socket('c2'), socket('o1', operator)]) fanOut.join(s);

  const delivered = fanOut.deliver(message(1));
  await new Promise((resolve) => setImmediate(resolve));
  t.same(sent, ['/public/ws/s c1,c2 message'], 'the customers have it while the check is pending');
  check(operator as AdminPrincipal);
  await delivered;
  t.same(sent, ['/public/ws/s c1,c2 message', '/ws/s o1 message'], 'the operator once it passed');

  sent.length = 0;
  const next = fanOut.deliver(message(2));
  await new Promise((resolve) => setImmediate(resolve));
  check(undefined);
  await next;
  t.same(sent, ['/public/ws/s c1,c2 message', 'o1 error SESSION_REVOKED'], 'a revoked administrator is told why and sent nothing');
});

t.test('a broadcast for operators only reaches no customer', async (t) => {
  const { sent, socket } = room();
  const operator = { session_id: 'admin-session', permissions: ['conversations.read'] } as AdminPrincipal;
  const fanOut = new RoomFanOut(
    async () => operator,
    (error) => t.error(error),
  );
  for (const s of [socket('c1'), socket('o1', operator)]) fanOut.join(s);
  await fanOut.deliver({ type: 'handoff_requested', session_id: 's', handoff: {} } as unknown as SessionBroadcast);
  t.same(sent, ['/ws/s o1 handoff_requested']);
});

t.test('a socket that read its view at its handshake gets, after it, what its session was sent meanwhile, once', async (t) => {
  const sent: string[] = [];
  const namespace = {
    local: {
      to: (ids: string[]) => ({
        emit: (type: string, payload: { message?: { content: string } }) =>
          sent.push(`${ids.join(',')} ${type}${payload.message ? ` ${payload.message.content}` : ''}`),
      }),
    },
  };
  const socket = (id: string) =>
    ({ id, nsp: namespace, data: { sessionId: 's' }, disconnected: false, once: () => undefined, emit: () => undefined }) as unknown as Socket;
  const stored = (id: string) => ({ type: 'message', session_id: 's', message: { message_id: id, content: id } }) as unknown as SessionBroadcast;
  const fanOut = new RoomFanOut(
    async () => undefined,
    (error) => t.error(error),
  );
  fanOut.join(socket('c1'));
  let reads = 0;
  const read = async () => {
    reads++;
    return { messages: [], session: undefined };
  };

  const held = fanOut.hold('s');
  // The joining socket's view holds m1 (stored before its read); m1's broadcast and m2's reach the room only after.
  const view = { messages: [{ message_id: 'm1' }], session: undefined } as never;
  await fanOut.deliver(stored('m1'));
  await fanOut.deliver(stored('m2'));
  await fanOut.admit(socket('c2'), read, { view, held });
  await fanOut.deliver(stored('m3'));
  t.same(
    sent,
    ['c1 message m1', 'c1 message m2', 'c2 history', 'c2 session', 'c2 message m2', 'c1,c2 message m3'],
    'after its history and state: m2, which its view lacked, but not m1 again; then it is in the room',
  );
  t.equal(reads, 0, 'its view is not read again');

  sent.length = 0;
  const overflowing = fanOut.hold('s');
  for (let i = 0; i < 501; i++) await fanOut.deliver(stored(`x${i}`));
  sent.length = 0;
  await fanOut.admit(socket('c3'), read, { view, held: overflowing });
  t.same(sent, ['c3 history', 'c3 session'], 'past the hold limit, it gets a view read in turn instead, and nothing twice');
  t.equal(reads, 1, 'read when it joins');

  const gone = { ...socket('c4'), disconnected: true } as unknown as Socket;
  sent.length = 0;
  await fanOut.admit(gone, read, { view, held: fanOut.hold('s') });
  await fanOut.deliver(stored('m4'));
  t.same(sent, ['c1,c2,c3 message m4'], 'a socket gone before it joined is sent nothing and never joins');
});
