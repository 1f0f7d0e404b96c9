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
