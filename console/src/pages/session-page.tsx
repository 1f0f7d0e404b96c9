import { useMutation, useQuery } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { useParams } from 'react-router';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { ErrorMessage, Loading } from '../components/states';
import { useLiveSession, type Message } from '../session-socket';
import { useCan, useSession } from '../session';

const SPEAKER: Record<string, string> = { user: 'Customer', assistant: 'AI', agent: 'Operator', system: 'System' };

function Transcript({ messages }: { messages: Message[] }) {
  if (messages.length === 0) return <p className="muted">No messages yet.</p>;
  return (
    <ol className="transcript" aria-label="Transcript" aria-live="polite">
      {messages.map((m) => (
        <li key={m.message_id} className={`message ${m.role === 'user' ? 'user' : m.role}`}>
          <span className="who">
            {m.role === 'agent' && m.sender_name_snapshot ? m.sender_name_snapshot : (SPEAKER[m.role] ?? m.role)} ·{' '}
            <time dateTime={m.created_at}>{new Date(m.created_at).toLocaleTimeString()}</time>
          </span>
          <p>{m.content}</p>
        </li>
      ))}
    </ol>
  );
}

/**
 * One session, live: its transcript as messages are stored, its state (AI or an operator), a badge when the agent
 * asked for a person, and for an operator taking it over, replying by hand and handing it back (REST, so refusals
 * come with their codes; the socket shows the outcome to every watcher).
 */
export function SessionPage() {
  const sessionId = useParams().sessionId!;
  const me = useSession();
  const mayOperate = useCan('conversations.write');
  const live = useLiveSession(sessionId);
  const [reply, setReply] = useState('');
  const events = useQuery({
    queryKey: ['takeover-events', sessionId, live.takeoverEvents],
    queryFn: () => expectData(api.GET('/sessions/{session_id}/takeover-events', { params: { path: { session_id: sessionId } } })),
  });
  const path = { params: { path: { session_id: sessionId } } };
  const takeOver = useMutation<unknown, ApiError, boolean>({
    mutationFn: (force) => expectData(api.POST('/sessions/{session_id}/takeover', { ...path, body: { force } })),
  });
  const release = useMutation<unknown, ApiError>({ mutationFn: () => expectData(api.POST('/sessions/{session_id}/release', { ...path, body: {} })) });
  const send = useMutation<unknown, ApiError, string>({
    mutationFn: (content) => expectData(api.POST('/sessions/{session_id}/manual-messages', { ...path, body: { content } })),
    onSuccess: () => setReply(''),
  });

  const state = live.state;
  const mine = state?.status === 'HUMAN_ACTIVE' && state.takeover_owner_id === me.admin_user_id;
  const failure = takeOver.error ?? release.error ?? send.error;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (reply.trim()) send.mutate(reply);
  };

  return (
    <>
      <h1>Session {sessionId}</h1>
      <p role="status" className="muted">
        {live.connected ? 'Live' : live.refusal ? `Not connected: ${live.refusal}` : 'Connecting…'}
        {live.handoff && <span className="badge guard-failed"> Asks for a person ({live.handoff.reason.replaceAll('_', ' ')})</span>}
      </p>
      {!state && !live.refusal && <Loading what="the session" />}
      {state && (
        <div className="toolbar">
          <span className={`badge ${state.status === 'HUMAN_ACTIVE' ? 'guard-warning' : 'guard-ok'}`}>
            {state.status === 'HUMAN_ACTIVE' ? `Taken over by ${mine ? 'you' : (state.takeover_owner_name ?? 'an operator')}` : 'The AI answers'}
          </span>
          {mayOperate && state.human_takeover_enabled && state.status === 'AI_ACTIVE' && (
            <button type="button" onClick={() => takeOver.mutate(false)} disabled={takeOver.isPending}>
              Take over
            </button>
          )}
          {mayOperate && state.status === 'HUMAN_ACTIVE' && !mine && (
            <button type="button" onClick={() => takeOver.mutate(true)} disabled={takeOver.isPending}>
              Take over from them
            </button>
          )}
          {mayOperate && mine && (
            <button type="button" onClick={() => release.mutate()} disabled={release.isPending}>
              Hand back to the AI
            </button>
          )}
          {!state.human_takeover_enabled && <span className="muted">This agent does not allow takeover.</span>}
        </div>
      )}
      {failure && <ErrorMessage error={failure} action="do that" />}
      <Transcript messages={live.messages} />
      {mine && (
        <form onSubmit={submit} className="composer">
          <label htmlFor="session-reply">Your reply</label>
          <textarea id="session-reply" rows={3} value={reply} onChange={(e) => setReply(e.target.value)} />
          <button type="submit" disabled={send.isPending || !reply.trim()}>
            Send reply
          </button>
        </form>
      )}
      <h2>Takeover events</h2>
      {events.isPending && <Loading what="takeover events" />}
      {events.isError && <ErrorMessage error={events.error} action="read the takeover events" />}
      {events.data && events.data.items.length === 0 && <p className="muted">No takeover yet.</p>}
      {events.data && events.data.items.length > 0 && (
        <DataTable
          compact
          rows={events.data.items}
          rowKey={(event) => event.event_id}
          columns={[
            { header: 'When', cell: (event) => <When at={event.created_at} /> },
            { header: 'Event', cell: (event) => event.event_type.replaceAll('_', ' ') },
            { header: 'Operator', cell: (event) => event.operator_name ?? event.operator_id ?? '—' },
            { header: 'Channel', cell: (event) => event.channel },
          ]}
        />
      )}
    </>
  );
}
