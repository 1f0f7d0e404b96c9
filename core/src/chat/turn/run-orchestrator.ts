import type { TurnEvent, TurnResult } from '@agent-host/sdk';
import type { TurnRecord } from '../conversation-store.js';
import { TAKEN_OVER, type RuntimeTurn } from './build-context.js';
import { quickMatch, shortcutEvents } from './shortcuts.js';
import type { StreamEvent, TurnCaller } from './turn-request.js';
import type { TurnTrace } from './turn-trace.js';

/** What a turn's reply came to, whichever stage answered it: what the save stage stores. */
export interface TurnOutcome {
  /** The result the runtime or a shortcut returned; none when the turn did not finish. */
  result: TurnResult | undefined;
  /** The reply streamed so far. */
  streamed: string;
  firstTokenMs: number | null;
  status: TurnRecord['status'];
  failure: string | null;
}

export const pendingOutcome = (): TurnOutcome => ({ result: undefined, streamed: '', firstTokenMs: null, status: 'failed', failure: null });

/** What can stop a turn, and what its caller may be told about a failure. */
export interface TurnStops {
  /** The client went away, or an administrator cancelled the turn (then `cancellation.by` says who). */
  signal: AbortSignal;
  cancellation: { by?: string };
  /** An operator took the session over before a model call. */
  takenOver?: AbortSignal;
  /** Administrators see a model's own error text; the public gets a reference to the trace. */
  trusted: boolean;
  traceId: string;
}

/** Stage 6, the runtime's events: the quick-match command when one matches (stage 3b), else the orchestrator's turn. */
export async function* runtimeEvents(runtime: RuntimeTurn, channel: TurnCaller['channel'], trace: TurnTrace): AsyncGenerator<TurnEvent, TurnResult, void> {
  const quick = await trace.stage('quick-match', async (attributes) => {
    const result = await quickMatch(runtime.tools, channel);
    attributes.matched = result !== null;
    return result;
  });
  if (quick) return yield* shortcutEvents(quick);
  const end = trace.begin('turn.orchestrator');
  try {
    return yield* runtime.orchestrator.run(runtime.context);
  } finally {
    end({ orchestrator_key: runtime.orchestratorKey });
  }
}

/** Streams a reply's events to the caller as they come and records the outcome; a failure becomes an `error` event. */
export async function* relayReply(
  events: AsyncGenerator<TurnEvent, TurnResult, void>,
  outcome: TurnOutcome,
  stops: TurnStops,
  started: number,
): AsyncGenerator<StreamEvent, void, void> {
  try {
    for (;;) {
      const step = await events.next();
      if (step.done) {
        outcome.result = step.value;
        return;
      }
      if (step.value.type === 'token') {
        outcome.firstTokenMs ??= Date.now() - started;
        outcome.streamed += step.value.content;
      }
      // An orchestrator's own error events carry no code: they are the runtime's report of a failure within the turn.
      yield step.value.type === 'error' ? { ...step.value, code: 'RUNTIME_ERROR' } : step.value;
    }
  } catch (error) {
    const { by } = stops.cancellation;
    const stopped = stops.takenOver?.aborted ? TAKEN_OVER : by ? `cancelled by ${by}` : stops.signal.aborted ? 'client disconnected' : null;
    outcome.failure = stopped ?? (error as Error).message;
    if (by) yield { type: 'error', content: `the turn was cancelled by ${by}`, code: 'TURN_CANCELLED' };
    // Provider text can carry key fragments and internal addresses: administrators see it, the public a reference.
    if (!stopped)
      yield {
        type: 'error',
        content: stops.trusted
          ? `the model failed to answer: ${(error as Error).message}`
          : `the model failed to answer; please try again (reference ${stops.traceId})`,
        code: 'MODEL_FAILED',
      };
  } finally {
    // Stopped by a takeover: aborted; by its caller leaving or an administrator: cancelled, with the usage spent so far.
    outcome.status = outcome.result ? 'completed' : stops.takenOver?.aborted ? 'aborted' : stops.signal.aborted ? 'cancelled' : 'failed';
  }
}
