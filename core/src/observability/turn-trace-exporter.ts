import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type IdGenerator } from '@opentelemetry/sdk-trace-base';
import { newTraceId } from './trace-id.js';

/** One stage of a turn as the chat service timed it (`context_payload.trace_spans`). */
export interface TimedSpan {
  name: string;
  /** Milliseconds from the turn's start. */
  start_ms: number;
  ms: number;
  attributes: Record<string, unknown>;
}

/** One model call of a turn, with its counted usage. */
export interface TimedModelCall {
  model_provider: string;
  model_name: string;
  start_ms: number;
  ms: number;
  input_tokens: number;
  output_tokens: number;
}

/** A finished turn, as exported. */
export interface TurnTrace {
  /** The turn's own 32-hex trace id: the exported trace has the same id, so one id finds both. */
  traceId: string;
  turnId: string;
  sessionId: string;
  agentId: string | null;
  startedAt: number;
  latencyMs: number;
  status: string;
  responseSource: string;
  spans: TimedSpan[];
  modelCalls: TimedModelCall[];
}

/** Span attributes take scalars and arrays of them; anything else is sent as JSON. */
function attributesOf(values: Record<string, unknown>): Attributes {
  return Object.fromEntries(
    Object.entries(values)
      .filter(([, value]) => value !== undefined && value !== null)
      .map(([key, value]) => [key, ['string', 'number', 'boolean'].includes(typeof value) ? value : JSON.stringify(value)]),
  ) as Attributes;
}

/**
 * Exports each turn's trace over OTLP/HTTP (Jaeger, Tempo, Langfuse, Phoenix...): a root span for the turn, a child
 * span per stage and per model call with the GenAI semantic conventions' attributes. Spans are batched and sent off
 * the turn's path; a collector that is down loses those spans, never a turn.
 */
export class TurnTraceExporter {
  private readonly provider: BasicTracerProvider;
  // The next root span takes the turn's own trace id.
  private nextTraceId: string | undefined;

  constructor(options: { endpoint: string; serviceName: string }) {
    const ids: IdGenerator = {
      generateTraceId: () => {
        const id = this.nextTraceId ?? newTraceId();
        this.nextTraceId = undefined;
        return id;
      },
      generateSpanId: () => randomBytes(8).toString('hex'),
    };
    const exporter = new OTLPTraceExporter({ url: new URL('v1/traces', options.endpoint.endsWith('/') ? options.endpoint : `${options.endpoint}/`).href });
    this.provider = new BasicTracerProvider({
      resource: resourceFromAttributes({ 'service.name': options.serviceName }),
      idGenerator: ids,
      spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })],
    });
  }

  export(turn: TurnTrace): void {
    const tracer = this.provider.getTracer('agent-host');
    const at = (offsetMs: number) => turn.startedAt + offsetMs;
    this.nextTraceId = turn.traceId;
    const root = tracer.startSpan(
      'chat turn',
      {
        kind: SpanKind.SERVER,
        startTime: turn.startedAt,
        attributes: attributesOf({
          'gen_ai.operation.name': 'chat',
          'gen_ai.conversation.id': turn.sessionId,
          'gen_ai.agent.id': turn.agentId,
          'agent_host.turn_id': turn.turnId,
          'agent_host.response_source': turn.responseSource,
          'agent_host.status': turn.status,
        }),
      },
      ROOT_CONTEXT,
    );
    const parent = trace.setSpan(ROOT_CONTEXT, root);
    for (const span of turn.spans) {
      tracer.startSpan(span.name, { startTime: at(span.start_ms), attributes: attributesOf(span.attributes) }, parent).end(at(span.start_ms + span.ms));
    }
    for (const call of turn.modelCalls) {
      tracer
        .startSpan(
          `chat ${call.model_name}`,
          {
            kind: SpanKind.CLIENT,
            startTime: at(call.start_ms),
            attributes: attributesOf({
              'gen_ai.operation.name': 'chat',
              'gen_ai.provider.name': call.model_provider,
              'gen_ai.request.model': call.model_name,
              'gen_ai.usage.input_tokens': call.input_tokens,
              'gen_ai.usage.output_tokens': call.output_tokens,
            }),
          },
          parent,
        )
        .end(at(call.start_ms + call.ms));
    }
    if (turn.status === 'failed') root.setStatus({ code: SpanStatusCode.ERROR });
    root.end(at(turn.latencyMs));
  }

  /** Sends what is batched and stops. */
  async shutdown(): Promise<void> {
    await this.provider.shutdown();
  }
}
