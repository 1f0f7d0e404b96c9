// Turn traces over OpenTelemetry: with [observability] otlp_endpoint set, each turn is posted to an OTLP/HTTP
// collector (here a fixture speaking OTLP/HTTP JSON) under the turn's own trace id, with GenAI attributes, and the
// turn context links to it.
import { createServer } from 'node:http';
import t from 'tap';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { stream } from '../helpers/sse.js';

type OtlpValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: { key: string; value: OtlpValue }[];
}

/** An OTLP/HTTP collector: accepts `POST /v1/traces` (JSON encoding) and keeps every span. */
async function otlpCollector(t: { teardown(fn: () => unknown): void }) {
  const spans: { span: OtlpSpan; service: string }[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      if (req.method === 'POST' && req.url === '/v1/traces' && /json/.test(req.headers['content-type'] ?? '')) {
        for (const resource of JSON.parse(body).resourceSpans ?? []) {
          const service = resource.resource.attributes.find((a: { key: string }) => a.key === 'service.name')?.value.stringValue;
          for (const scope of resource.scopeSpans ?? []) for (const span of scope.spans ?? []) spans.push({ span, service });
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      } else {
        res.writeHead(404);
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as { port: number }).port}`, spans };
}

const attribute = (span: OtlpSpan, key: string) => {
  const value = span.attributes.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : value?.boolValue);
};

t.test('each turn is exported over OTLP under its own trace id, with GenAI attributes, and the turn context links to it', async (t) => {
  const collector = await otlpCollector(t);
  const host = await startTestHost(t, {
    env: {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SERVICE_NAME: 'agent-host-test',
      AGENT_HOST__OBSERVABILITY__TRACE_URL_TEMPLATE: '"http://traces.example/trace/{trace_id}"',
    },
  });
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (
    await admin.request('POST', '/agents', {
      name: 'Traced',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      system_prompt: 'Parcels ship within two days.',
    })
  ).body;
  const thread = `otel-${Date.now()}`;
  await stream(host.url, { thread_id: thread, agent_id: agent.agent_id, message: 'When do parcels ship?' }, { cookie: admin.cookieHeader('/') });
  const turn = (await admin.request('GET', `/sessions/${thread}/turns`)).body.items[0];
  const context = (await admin.request('GET', `/sessions/${thread}/turns/${turn.turn_id}/context`)).body;
  const { trace } = context.context_payload;
  t.match(
    trace,
    { exported: true, url: `http://traces.example/trace/${trace.trace_id}` },
    'the turn context keeps its trace id and links to the exported trace',
  );
  t.match(trace.trace_id, /^[0-9a-f]{32}$/);

  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !collector.spans.some(({ span }) => span.traceId === trace.trace_id && span.name === 'chat turn'))
    await new Promise((r) => setTimeout(r, 100));
  const ofTurn = collector.spans.filter(({ span }) => span.traceId === trace.trace_id);
  const root = ofTurn.find(({ span }) => span.name === 'chat turn');
  t.ok(root, 'the collector received the turn under its trace id');
  t.equal(root?.service, 'agent-host-test', 'with the configured service.name');
  t.equal(attribute(root!.span, 'gen_ai.conversation.id'), thread);
  t.equal(attribute(root!.span, 'agent_host.turn_id'), turn.turn_id);
  const model = ofTurn.find(({ span }) => span.name.startsWith('chat ') && span.name !== 'chat turn');
  t.ok(model, 'a span for the model call');
  t.equal(model?.span.parentSpanId, root?.span.spanId, 'a child of the turn');
  t.equal(attribute(model!.span, 'gen_ai.request.model'), turn.model_name, 'naming the model');
  t.equal(attribute(model!.span, 'gen_ai.provider.name'), turn.model_provider);
  t.equal(attribute(model!.span, 'gen_ai.usage.input_tokens'), turn.generation_usage.input_tokens, "with the turn's token usage");
});

t.test('without an endpoint nothing is exported and the context says so', async (t) => {
  const host = await startTestHost(t);
  const admin = new AdminClient(host.url);
  await admin.login();
  const agent = (await admin.request('POST', '/agents', { name: 'Untraced', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  const thread = `no-otel-${Date.now()}`;
  await stream(host.url, { thread_id: thread, agent_id: agent.agent_id, message: 'hello' }, { cookie: admin.cookieHeader('/') });
  const turn = (await admin.request('GET', `/sessions/${thread}/turns`)).body.items[0];
  const context = (await admin.request('GET', `/sessions/${thread}/turns/${turn.turn_id}/context`)).body;
  t.match(context.context_payload.trace, { exported: false, url: null });
});
