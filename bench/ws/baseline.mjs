// The bare baseline of the WebSocket benchmark: a minimal socket.io server (the host's socket.io, default
// in-memory adapter) with the host's namespaces `/public/ws/<session>` and `/ws/<session>` (served alike: no
// login), one room per session. On connect it sends `history` (empty) and `session`; each `user_message`
// becomes a stored-looking `message` broadcast to the sender's room, then the acknowledgement. No validation,
// database or AI. Run as a child of run.mjs (IPC); sends {port} when listening; exits when the parent goes away.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { Server } from 'socket.io';

const NAMESPACE = /^(?:\/public)?\/ws\/([^/]+)$/;
const httpServer = createServer();
const io = new Server(httpServer, { serveClient: false, cleanupEmptyChildNamespaces: true });

/** The (at most two) namespaces of each session, whose rooms together are the session's room. */
const namespaces = new Map();

io.of(NAMESPACE).on('connection', (socket) => {
  const sessionId = decodeURIComponent(NAMESPACE.exec(socket.nsp.name)[1]);
  if (!namespaces.has(sessionId)) namespaces.set(sessionId, new Set());
  namespaces.get(sessionId).add(socket.nsp);
  socket.on('disconnect', () => {
    if (socket.nsp.sockets.size === 0) namespaces.get(sessionId)?.delete(socket.nsp);
    if (namespaces.get(sessionId)?.size === 0) namespaces.delete(sessionId);
  });
  const operator = socket.handshake.query.role === 'operator';
  const agentId = socket.handshake.query.agent_id ?? null;
  void socket.join(sessionId);
  socket.emit('history', { type: 'history', session_id: sessionId, messages: [] });
  socket.emit('session', { type: 'session', session_id: sessionId, agent_id: agentId, status: 'HUMAN_ACTIVE', human_takeover_enabled: true });
  socket.on('user_message', (payload, ack) => {
    const message = {
      message_id: randomUUID(),
      session_id: sessionId,
      role: operator ? 'agent' : 'user',
      content: String(payload?.content ?? ''),
      message_type: 'user_chat',
      turn_id: null,
      sender_id_snapshot: null,
      sender_name_snapshot: null,
      metadata: null,
      created_at: new Date().toISOString(),
    };
    for (const nsp of namespaces.get(sessionId)) nsp.to(sessionId).emit('message', { type: 'message', session_id: sessionId, message });
    if (typeof ack === 'function') ack({ ok: true });
  });
});

httpServer.listen(0, '127.0.0.1', () => process.send?.({ type: 'listening', port: httpServer.address().port }));
process.on('disconnect', () => {
  io.close();
  httpServer.closeAllConnections();
  setTimeout(() => process.exit(0), 200).unref();
});
