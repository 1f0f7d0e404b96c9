import { randomBytes } from 'node:crypto';
import { AgentHostError, ERROR_CODES, type ErrorCode } from '@agent-host/sdk';
import { z } from 'zod';
import type { AdminPrincipal } from '../../admin/admin-auth.js';
import type { AgentView } from '../../agents/agents.js';
import type { HostConfig } from '../../config/schema.js';
import { canonicalTimeZone } from '../../scheduled-tasks/schedule.js';
import type { TokenUsageSummary } from '../../usage/token-usage.js';
import type { OpenedSession, TurnRecord } from '../conversation-store.js';
import type { ModelOverride } from '../model-router.js';
import type { TurnTicket } from '../session-turns.js';

/** `ChatRequest` (spec 4.2). `message_type` is free text: unknown values become `other`, never a 422. */
export const chatRequestSchema = z
  .object({
    thread_id: z.string().trim().min(1).max(200).optional(),
    agent_id: z.string().trim().min(1).max(64).nullable().optional(),
    message: z.string(),
    message_type: z.string().max(64).optional(),
    model_name: z.string().trim().min(1).max(200).optional(),
    model_provider: z.string().trim().min(1).max(80).optional(),
    model_temperature: z.number().min(0).max(2).optional(),
    // Ours, beyond the spec: the caller's IANA zone, kept on the session; scheduling in the chat reads times in it.
    time_zone: z
      .string()
      .trim()
      .max(64)
      .transform(
        (zone, context) =>
          canonicalTimeZone(zone) ?? (context.addIssue({ code: 'custom', message: 'is not an IANA time zone such as "Europe/Berlin"' }), z.NEVER),
      )
      .optional(),
  })
  .strict();

export type ChatRequest = z.output<typeof chatRequestSchema>;

/** The turn a stream stored, which its `done` event names; none for a refusal or a message during a takeover. */
export interface StoredTurn {
  session_id: string;
  turn_id: string;
  usage: TokenUsageSummary;
}

/** SSE events of spec 6.1; `done` is always the last, and names the turn it stored. The host's `error` events carry a stable `code`. */
export type StreamEvent = { type: 'token'; content: string } | { type: 'error'; content: string; code: ErrorCode } | ({ type: 'done' } & Partial<StoredTurn>);

/** Random bytes for session ids, drawn 256 ids at a time: a draw of 16 took 15 to 17 µs after an idle gap, a slice 4. */
const idEntropy = { pool: Buffer.alloc(0), at: 0 };

/** A session id a client cannot guess (128 random bits): the id of every session an anonymous client starts. */
export function issueSessionId(): string {
  if (idEntropy.at === idEntropy.pool.length) {
    idEntropy.pool = randomBytes(16 * 256);
    idEntropy.at = 0;
  }
  idEntropy.at += 16;
  return idEntropy.pool.toString('base64url', idEntropy.at - 16, idEntropy.at);
}

/**
 * Who starts a turn, and through which channel: quick match answers only `POST /stream` (spec 4.13); a WebSocket
 * customer message always goes to the orchestrator. `scheduled` is a scheduled task's run: the host itself, in the
 * task's session, on the task's agent whatever its public access, counted against the caller who made the task.
 * `evaluation` is an evaluation run's item: the agent's runtime in no session, stored and counted nowhere.
 */
export interface TurnCaller {
  principal: AdminPrincipal | undefined;
  callerKey: string | null;
  channel: 'http' | 'websocket' | 'scheduled' | 'evaluation';
  /** The request's `thread_id` was issued by the server for this request: a new session for its caller. */
  issuedSession?: boolean;
  /** The request's id (`X-Request-Id`), logged with a failure the caller is told about only by its code. */
  requestId?: string;
}

/** A request `admit` accepted: what `stream` runs, with what it already looked up. */
export interface AdmittedTurn {
  request: ChatRequest;
  caller: TurnCaller;
  agent: AgentView | null;
  override: ModelOverride | null;
  /** The caller may choose sessions (an administrator with conversations.write). */
  trusted: boolean;
  /** The turn's place in its session's line; none for a session this request starts (its ticket comes with the session). */
  ticket: TurnTicket | null;
  /**
   * The session opened with the turn's minute budgets, so stage 2 finds it open: one the server issued for this
   * request, a session the turn continues whose line it was first in, or a customer's session under takeover with the
   * message stored.
   */
  opened?: OpenedSession;
  /** The id the turn is stored under, known from the start so its ticket names it. */
  turnId: string;
}

/** The identity of a running turn: what every stage names it by, and the columns its stored record starts from. */
export type TurnIdentity = Pick<TurnRecord, 'turn_id' | 'session_id' | 'agent_id' | 'message_type' | 'user_message' | 'user_text' | 'caller_key' | 'trace_id'>;

/**
 * A turn that cannot run, with its catalog code. Found by `admit`, it is an HTTP error before any stream opens;
 * found once streaming, it is an `error` event, then `done`.
 */
export const refusal = (code: ErrorCode, message: string) => new AgentHostError(ERROR_CODES[code].status ?? 409, message, { code });

/**
 * Administrators who may write conversations choose session ids and continue any session; everyone else
 * (anonymous clients, administrators without the permission) chats only in sessions the server issued to them.
 */
export const mayChooseSessions = (principal: AdminPrincipal | undefined) => principal?.permissions.includes('conversations.write') ?? false;

/** A scheduled run chooses its session (the task's, or one it starts) as an administrator would. */
export const trustedCaller = (caller: TurnCaller) => caller.channel === 'scheduled' || mayChooseSessions(caller.principal);

/** The caller whose turns today the statement opening the session counts, for the daily quota (`null`: none). */
export const quotaCaller = (config: HostConfig, caller: TurnCaller) => (config.agent.per_caller_daily_requests > 0 ? caller.callerKey : null);
