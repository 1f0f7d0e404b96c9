import { chatRequestSchema, issueSessionId } from '@agent-host/core';
import { z } from 'zod';
import { tokenUsageSummary } from '../schemas/usage.js';
import { errorCode } from '../ws/contract.js';
import { route, type RouteFactory } from './route.js';

/** The events of spec 6.1, as `core`'s StreamEvent writes them; `done` names the turn it stored. */
const streamEvent = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('token'), content: z.string().describe('A fragment of the reply') }),
    z.object({
      type: z.literal('error'),
      content: z.string().describe('What went wrong, for a person'),
      code: errorCode,
      request_id: z.string().describe('The X-Request-Id of the request'),
    }),
    z.object({
      type: z.literal('done'),
      session_id: z.string().optional(),
      turn_id: z.string().uuid().optional(),
      usage: tokenUsageSummary.optional().describe("The turn's token usage"),
    }),
  ])
  .meta({ id: 'StreamEvent' });

/**
 * `POST /stream` (spec 4.2, 6.1): server-sent events, each `data: <json>`
 * and a blank line, written as they come; `done` is always last. A client
 * that disconnects aborts the turn, which is still persisted. What
 * `chat.admit` checks (rate limits too) comes before the stream opens: those
 * refusals are HTTP errors; once streaming, failures are `error` events.
 */
export const streamRoutes: RouteFactory<'chat'> = (domains) => {
  return [
    route({
      method: 'post',
      path: '/stream',
      access: { public: true },
      // The turn's logger names the request (`caller.requestId`).
      unscoped: true,
      summary: 'Send a message and stream the reply as server-sent events (token, error, done)',
      success: {
        status: 200,
        contentType: 'text/event-stream',
        itemSchema: streamEvent,
        description:
          'Events `data: {"type": "token" | "error" | "done", ...}`; without thread_id the X-Session-Id header (and `done`) carries the issued session id',
      },
      refusals: {
        403: 'The agent is not public, or takes no model override from public clients (AGENT_NOT_PUBLIC, MODEL_OVERRIDE_REFUSED)',
        404: 'No such agent (AGENT_NOT_FOUND)',
        409: 'The agent is not active (AGENT_INACTIVE), or the session is answering another message and the agent rejects double texting (SESSION_BUSY)',
        422: 'An empty or too long message (MESSAGE_EMPTY, MESSAGE_TOO_LONG), no agent_id from a public caller (AGENT_REQUIRED), or a model outside the catalog (UNKNOWN_MODEL)',
        429: 'A rate limit of [rate_limits] was reached; see Retry-After (RATE_LIMITED)',
      },
      body: chatRequestSchema,
      example: { thread_id: 'customer-42', agent_id: '0b5c6a4e-8d1f-4c3a-9e2b-7f6d5c4b3a21', message: 'Where is parcel JD0142?' },
      handler: async (req, res, { principal, origin, body }) => {
        const callerKey = principal ? `admin:${principal.admin_user_id}` : origin.clientIp ? `ip:${origin.clientIp}` : null;
        // A request without thread_id starts a session under an id the server issues; the client reads it here
        // (and in `done`) and sends it back as thread_id to continue.
        const issuedSession = body.thread_id === undefined;
        const request = { ...body, thread_id: body.thread_id ?? issueSessionId() };
        // Refused before the stream opens, as an HTTP error: an unknown or non-public agent, a bad message or override, a
        // rate limit.
        const admitted = await domains.chat.admit(request, { principal, callerKey, channel: 'http', issuedSession, requestId: req.id() });
        const disconnected = new AbortController();
        res.on('close', () => {
          if (!res.writableFinished) disconnected.abort();
        });
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          'x-accel-buffering': 'no',
          'x-session-id': request.thread_id,
        });
        // A token is written at once; those that come with it in the same turn of the event loop (a model
        // often sends several per network read) follow in one write when the loop turns, not one write each.
        let corked = false;
        const uncork = () => {
          if (corked) res.uncork();
          corked = false;
        };
        for await (const event of domains.chat.stream(admitted, disconnected.signal)) {
          if (disconnected.signal.aborted) continue;
          res.write(`data: ${JSON.stringify(event.type === 'error' ? { ...event, request_id: req.id() } : event)}\n\n`);
          if (!corked) {
            corked = true;
            res.cork();
            setImmediate(uncork);
          }
        }
        uncork();
        res.end();
      },
    }),
  ];
};
