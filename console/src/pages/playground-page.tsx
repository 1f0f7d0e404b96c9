import { useRef, useState, type FormEvent } from 'react';
import { flushSync } from 'react-dom';
import { useSearchParams } from 'react-router';
import { useAgentsOfType } from '../agents-of-type';
import type { ApiError } from '../api';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { CorrectionEditor } from '../components/correction-editor';
import { RagDebug } from '../components/rag-debug';
import { TurnInspector } from '../components/turn-inspector';
import { useCan } from '../session';
import { streamTurn } from '../stream';

interface Message {
  key: number;
  role: 'user' | 'assistant';
  text: string;
  streaming?: boolean;
  error?: ApiError | { message: string; code: string; request_id: string; detail: unknown };
  turnId?: string;
}

/**
 * Chat with an agent over `POST /stream` as the logged-in administrator: tokens are rendered as they arrive, and each
 * reply can be opened in the turn inspector beside the conversation. A new agent or "New conversation" starts a
 * new session; every message after the first goes on in the session the host named.
 */
export function PlaygroundPage() {
  const agents = useAgentsOfType('chat');
  const mayInspect = useCan('conversations.read');
  const mayReadKnowledge = useCan('knowledge.read');
  const mayCorrect = useCan('knowledge.write');
  const [params, setParams] = useSearchParams();
  const [messages, setMessages] = useState<Message[]>([]);
  const [sessionId, setSessionId] = useState<string>();
  const [draft, setDraft] = useState('');
  const [busy, setBusy] = useState(false);
  const [inspected, setInspected] = useState<string>();
  const nextKey = useRef(0);

  const agentId = params.get('agent') ?? agents.data?.[0]?.agent_id;
  const startOver = () => {
    setMessages([]);
    setSessionId(undefined);
    setInspected(undefined);
  };
  const update = (key: number, change: (message: Message) => Message) => setMessages((all) => all.map((m) => (m.key === key ? change(m) : m)));

  async function send(event: FormEvent) {
    event.preventDefault();
    if (!agentId || !draft.trim()) return;
    const message = draft;
    const replyKey = (nextKey.current += 2);
    setDraft('');
    setBusy(true);
    setMessages((all) => [...all, { key: replyKey - 1, role: 'user', text: message }, { key: replyKey, role: 'assistant', text: '', streaming: true }]);
    try {
      await streamTurn({ agent_id: agentId, message, ...(sessionId && { thread_id: sessionId }) }, (streamed) => {
        // Rendered now, not in React's next task, which the browser may run after painting a frame without it.
        if (streamed.type === 'token') flushSync(() => update(replyKey, (m) => ({ ...m, text: m.text + streamed.content })));
        else if (streamed.type === 'error')
          update(replyKey, (m) => ({ ...m, error: { message: streamed.content, code: streamed.code, request_id: streamed.request_id, detail: null } }));
        else if (streamed.type === 'done') {
          if (streamed.session_id) setSessionId(streamed.session_id);
          update(replyKey, (m) => ({ ...m, turnId: streamed.turn_id }));
          if (streamed.turn_id) setInspected(streamed.turn_id);
        }
      });
    } catch (error) {
      update(replyKey, (m) => ({ ...m, error: error as ApiError }));
      // The message was not taken: give it back to the box rather than lose it.
      setDraft((current) => current || message);
    } finally {
      update(replyKey, (m) => ({ ...m, streaming: false }));
      setBusy(false);
    }
  }

  if (agents.isPending) return <Loading what="agents" />;
  if (agents.isError) return <ErrorMessage error={agents.error} action="list the agents" />;
  return (
    <>
      <h1>Playground</h1>
      {agents.data.length === 0 ? (
        <Empty>
          <p>There is no chat agent to talk to yet.</p>
        </Empty>
      ) : (
        <div className="playground">
          <div className="chat">
            <div className="toolbar">
              <label htmlFor="playground-agent">Agent</label>
              <select
                id="playground-agent"
                value={agentId}
                onChange={(e) => {
                  setParams({ agent: e.target.value });
                  startOver();
                }}
              >
                {agents.data.map((agent) => (
                  <option key={agent.agent_id} value={agent.agent_id}>
                    {agent.name}
                  </option>
                ))}
              </select>
              <button type="button" onClick={startOver} disabled={busy || messages.length === 0}>
                New conversation
              </button>
            </div>
            <ol className="transcript" aria-label="Conversation" aria-live="polite">
              {messages.map((m) => (
                <li key={m.key} className={`message ${m.role}`}>
                  <span className="who">{m.role === 'user' ? 'You' : 'Agent'}</span>
                  <p data-streaming={m.streaming ? 'true' : undefined}>{m.text}</p>
                  {m.error && <ErrorMessage error={m.error} action="get a reply" />}
                  {m.turnId && mayInspect && (
                    <button type="button" className="link" aria-pressed={inspected === m.turnId} onClick={() => setInspected(m.turnId)}>
                      Inspect
                    </button>
                  )}
                </li>
              ))}
            </ol>
            <form onSubmit={(e) => void send(e)} className="composer">
              <label htmlFor="playground-message">Message</label>
              <textarea id="playground-message" rows={3} value={draft} onChange={(e) => setDraft(e.target.value)} />
              <button type="submit" disabled={busy || !draft.trim()}>
                {busy ? 'Answering…' : 'Send'}
              </button>
            </form>
            {sessionId && <p className="muted">Session {sessionId}</p>}
          </div>
          {mayInspect && sessionId && inspected && <TurnInspector sessionId={sessionId} turnId={inspected} />}
          {mayInspect && sessionId && inspected && <RagDebug key={inspected} sessionId={sessionId} turnId={inspected} />}
          {mayInspect && mayReadKnowledge && sessionId && inspected && <CorrectionEditor sessionId={sessionId} turnId={inspected} mayWrite={mayCorrect} />}
        </div>
      )}
    </>
  );
}
