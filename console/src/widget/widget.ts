// The embeddable chat widget: one script tag on any page chats with a public_anonymous agent through the host's
// demo gateway (socket.io namespace /demo, spec 6.4). Plain DOM, no framework, so the file stays small; it draws in a
// shadow root with its own stylesheet, so the page's styles and the widget's never meet.
import { io, type Socket } from 'socket.io-client';

/** What a page may set: the agent, and whether the panel starts open. */
export interface WidgetOptions {
  agentId: string;
  /** The host's origin; defaults to where the script was loaded from. */
  host?: string;
  title?: string;
  open?: boolean;
}

type AiResponse = { kind: 'token'; content: string } | { kind: 'error'; content: string; code: string } | { kind: 'done'; session_id: string | null };

const STORAGE_PREFIX = 'agent-host-widget:';

function element<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]> = {}, ...children: Node[]): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}

/**
 * Puts the widget on the page: a button that opens a chat panel. The conversation goes on in one session, kept in
 * sessionStorage so a reload resumes it; a session the host no longer serves is forgotten and a new one starts.
 */
export function mount(options: WidgetOptions): { close: () => void } {
  const host = options.host ?? window.location.origin;
  const storageKey = STORAGE_PREFIX + options.agentId;
  const container = element('div');
  const shadow = container.attachShadow({ mode: 'open' });
  const log = element('ol', { className: 'log' });
  log.setAttribute('aria-live', 'polite');
  const status = element('p', { className: 'status' });
  status.setAttribute('role', 'status');
  const input = element('input', { type: 'text', placeholder: 'Type a message', autocomplete: 'off' });
  input.setAttribute('aria-label', 'Message');
  const sendButton = element('button', { type: 'submit', textContent: 'Send' });
  const form = element('form', { className: 'composer' }, input, sendButton);
  const heading = element('h2', { textContent: options.title ?? 'Chat with us' });
  const panel = element('section', { className: 'panel', hidden: !options.open }, heading, log, status, form);
  panel.setAttribute('aria-label', heading.textContent ?? 'Chat');
  const toggle = element('button', { type: 'button', className: 'toggle', textContent: options.open ? 'Close chat' : 'Chat' });
  toggle.setAttribute('aria-expanded', String(Boolean(options.open)));
  shadow.append(element('link', { rel: 'stylesheet', href: `${host}/console/widget.css` }), panel, toggle);
  document.body.append(container);

  toggle.addEventListener('click', () => {
    panel.hidden = !panel.hidden;
    toggle.textContent = panel.hidden ? 'Chat' : 'Close chat';
    toggle.setAttribute('aria-expanded', String(!panel.hidden));
    if (!panel.hidden) input.focus();
  });

  let socket: Socket;
  let reply: HTMLElement | undefined;
  const connect = () => {
    const sessionId = sessionStorage.getItem(storageKey);
    socket = io(`${host}/demo`, { transports: ['websocket'], query: { agent_id: options.agentId, ...(sessionId && { session_id: sessionId }) } });
    socket.on('connect', () => {
      status.textContent = '';
      sendButton.disabled = false;
    });
    socket.on('connect_error', (error: Error) => {
      sendButton.disabled = true;
      if (sessionId && /session/.test(error.message)) {
        // The host no longer serves the stored session: start a new one.
        sessionStorage.removeItem(storageKey);
        socket.close();
        connect();
        return;
      }
      status.textContent = error.message === 'Invalid namespace' ? 'The chat is switched off on this host (demo_gateway.enabled).' : error.message;
    });
    socket.on('ai_response', (response: AiResponse) => {
      if (response.kind === 'token') {
        reply ??= say('agent', '');
        reply.textContent += response.content;
        log.scrollTop = log.scrollHeight;
      } else if (response.kind === 'error') {
        say('error', response.content);
      } else {
        if (response.session_id) sessionStorage.setItem(storageKey, response.session_id);
        reply = undefined;
        sendButton.disabled = false;
      }
    });
  };

  function say(who: 'user' | 'agent' | 'error', text: string): HTMLElement {
    const item = element('li', { className: who, textContent: text });
    log.append(item);
    log.scrollTop = log.scrollHeight;
    return item;
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const content = input.value.trim();
    if (!content) return;
    say('user', content);
    input.value = '';
    sendButton.disabled = true;
    socket.emit('user_message', { content, time_zone: Intl.DateTimeFormat().resolvedOptions().timeZone });
  });

  sendButton.disabled = true;
  connect();
  return {
    close: () => {
      socket.close();
      container.remove();
    },
  };
}

// A script tag with data-agent-id mounts the widget by itself; without it, the page's own ?agent_id= is used, so a
// demo page can take the agent from its address.
const script = document.currentScript as HTMLScriptElement | null;
if (script) {
  const agentId = script.dataset.agentId ?? new URLSearchParams(window.location.search).get('agent_id');
  if (agentId) {
    mount({ agentId, host: new URL(script.src).origin, title: script.dataset.title, open: script.dataset.open !== undefined });
  }
}
