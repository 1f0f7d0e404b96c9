import type { JobScheduler, Logger } from '@agent-host/sdk';
import { publicError } from '../errors/public-error.js';
import { SHORT_JOB_LOCK_MS } from '../jobs/short-lock.js';
import { newTraceId } from '../observability/trace-id.js';
import type { RequestLimits } from './request-limits.js';
import type { TurnTicket } from './session-turns.js';
import { admitTurn, type AdmitDeps } from './turn/admit.js';
import { buildTurnContext, type ContextStageDeps } from './turn/build-context.js';
import { enterLimits } from './turn/enter-limits.js';
import { evaluateTurn, judgeModel, type EvaluatedTurn } from './turn/evaluate-turn.js';
import { BEHIND, openTurnSession, publishMessages, type OpenTurn, type SessionStageDeps } from './turn/open-session.js';
import { pendingOutcome, relayReply, runtimeEvents, type TurnStops } from './turn/run-orchestrator.js';
import { saveTurn, type SaveStageDeps } from './turn/save-turn.js';
import { fixedResponse, shortcutEvents } from './turn/shortcuts.js';
import type { AdmittedTurn, ChatRequest, StoredTurn, StreamEvent, TurnCaller } from './turn/turn-request.js';
import { TurnTrace } from './turn/turn-trace.js';

const SWEEP_JOB = 'sweep-lapsed';
const SWEEP_INTERVAL = '10 minutes';

export type ChatServiceDeps = AdmitDeps &
  SessionStageDeps &
  ContextStageDeps &
  SaveStageDeps & {
    limits: RequestLimits;
    logger: Logger;
  };

/**
 * One chat turn from request to `done` (spec 4.2), for every channel, as one pipeline of named stages, each in its own
 * module under `turn/`: resolve the agent (`admit`, before a stream opens) → resolve the session → the fixed response
 * → the request limits → build the turn context → quick match or the orchestrator → save the turn, once. Every path
 * ends with `done`.
 */
export class ChatService {
  constructor(private readonly deps: ChatServiceDeps) {}

  /** Sweeps what crashed instances left (`sweepLapsed`) every {@link SWEEP_INTERVAL}, on one instance at a time. */
  async start(jobs: JobScheduler): Promise<void> {
    jobs.define(SWEEP_JOB, async () => void (await this.sweepLapsed()), { lockLifetimeMs: SHORT_JOB_LOCK_MS, concurrency: 1 });
    await jobs.every(SWEEP_INTERVAL, SWEEP_JOB, {});
  }

  /**
   * Drops the places in sessions' lines and the agents' concurrency leases that a crashed instance left: expired, they
   * hold nothing up, and no turn will remove them. A turn removes its own by key.
   */
  async sweepLapsed(): Promise<{ tickets: number; leases: number }> {
    const swept = { tickets: await this.deps.turns.sweepLapsed(), leases: await this.deps.limits.sweepLapsed() };
    if (swept.tickets + swept.leases > 0) this.deps.logger.info(swept, 'swept the tickets and leases of crashed instances');
    return swept;
  }

  /** Stage 1, before a stream opens: a refusal is thrown as an `AgentHostError` with its catalog code. */
  admit(request: ChatRequest, caller: TurnCaller): Promise<AdmittedTurn> {
    return admitTurn(this.deps, request, caller);
  }

  /** Runs an admitted turn: events as they come, `error` events for what goes wrong, and always `done` last. */
  async *stream(admitted: AdmittedTurn, signal: AbortSignal): AsyncGenerator<StreamEvent, void, void> {
    const done: { turn?: StoredTurn } = {};
    const { ticket } = admitted;
    // The turn stops when the client goes away, or when an administrator cancels it (POST /sessions/{id}/cancel) from
    // any instance. One controller for both: AbortSignal.any over the two cost some 20 µs of CPU a turn on Node 20.
    const stop = new AbortController();
    const clientGone = () => stop.abort(signal.reason);
    if (signal.aborted) clientGone();
    else signal.addEventListener('abort', clientGone, { once: true });
    const cancellation: { by?: string } = {};
    // The ticket the turn holds: admission's, or the one taken with a session the turn starts (stage 2).
    const held: { ticket?: TurnTicket; stopWatching?: () => void } = {};
    const hold = (taken: TurnTicket) => {
      held.ticket = taken;
      held.stopWatching = taken.watchCancel(({ by }) => {
        cancellation.by = by;
        stop.abort();
      });
    };
    if (ticket) hold(ticket);
    try {
      const waitSeconds = this.deps.config.agent.turn_queue_timeout_seconds;
      let trace = new TurnTrace(newTraceId(), Date.now());
      const openSession = () => trace.stage('session', () => openTurnSession(this.deps, admitted, trace.traceId, hold));
      let open = await openSession();
      while (open === BEHIND) {
        if (!(await ticket!.waitForTurn(stop.signal, waitSeconds * 1000))) {
          if (!signal.aborted) {
            yield cancellation.by
              ? { type: 'error', content: `the message was cancelled by ${cancellation.by} before it was answered`, code: 'TURN_CANCELLED' }
              : { type: 'error', content: `the session was busy answering earlier messages for ${waitSeconds} s; send this one again`, code: 'SESSION_BUSY' };
          }
          return;
        }
        // Timed from when its turn came, like a turn that did not wait.
        trace = new TurnTrace(trace.traceId, Date.now());
        open = await openSession();
      }
      // A human operator answers the session: the message was stored and shown, and no turn runs.
      if (open) yield* this.turn(admitted, open, trace, stop.signal, cancellation, done);
    } catch (error) {
      // The mapping of an HTTP error: what was raised on purpose says what it is; anything else only that it happened.
      const known = publicError(error);
      if (!known.deliberate) this.deps.logger.error({ err: error, req_id: admitted.caller.requestId, code: known.code }, 'chat turn failed');
      yield { type: 'error', content: known.message, code: known.code };
    } finally {
      signal.removeEventListener('abort', clientGone);
      held.stopWatching?.();
      await held.ticket?.leave();
      yield { type: 'done', ...done.turn };
    }
  }

  /** An evaluation item's turn (`turn/evaluate-turn.ts`): the agent's runtime, stored and counted nowhere. */
  evaluate(input: Parameters<typeof evaluateTurn>[1]): Promise<EvaluatedTurn> {
    return evaluateTurn(this.deps, input);
  }

  /** The model that judges an evaluation item, with the usage of its calls. */
  judgeModel(agent: Parameters<typeof judgeModel>[1], override: Parameters<typeof judgeModel>[2]) {
    return judgeModel(this.deps, agent, override);
  }

  /** The turn in its open session: stages 3 on. */
  private async *turn(
    admitted: AdmittedTurn,
    open: OpenTurn,
    trace: TurnTrace,
    signal: AbortSignal,
    cancellation: { by?: string },
    done: { turn?: StoredTurn },
  ) {
    const { deps } = this;
    const outcome = pendingOutcome();
    const stops: TurnStops = { signal, cancellation, trusted: admitted.trusted, traceId: trace.traceId };
    const fixed = await trace.stage('fixed-response', async (attributes) => {
      const result = fixedResponse(admitted.agent, open.messageType, admitted.request.message);
      attributes.matched = result !== null;
      return result;
    });
    if (fixed) {
      try {
        yield* relayReply(shortcutEvents(fixed), outcome, stops, trace.started);
      } finally {
        done.turn = await saveTurn(deps, { admitted, open, trace, outcome, runtime: null });
      }
      return;
    }
    const lease = await trace.stage('limits', () => enterLimits(deps.limits, admitted.agent, admitted.caller.callerKey, open.callerTurnsToday));
    try {
      const runtime = await trace.stage('context', async () => buildTurnContext(deps, admitted, open, trace, signal));
      // The turn runs: operators watching the session see the customer's message now, not once the reply is stored.
      const { identity } = open;
      publishMessages(deps.events, identity.session_id, [
        {
          id: identity.user_message.id,
          session_id: identity.session_id,
          role: 'user',
          content: identity.user_text,
          message_type: identity.message_type,
          turn_id: identity.turn_id,
          sender_id_snapshot: null,
          sender_name_snapshot: null,
          metadata: null,
          created_at: identity.user_message.created_at,
        },
      ]);
      try {
        yield* relayReply(runtimeEvents(runtime, admitted.caller.channel, trace), outcome, { ...stops, takenOver: runtime.takenOver }, trace.started);
      } finally {
        done.turn = await saveTurn(deps, { admitted, open, trace, outcome, runtime });
      }
    } finally {
      await lease?.release();
    }
  }
}
