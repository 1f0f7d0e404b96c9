// As a new user would: upload a PDF and a DOCX, ingest, ask through
// POST /stream and find the passage in the turn's rag_context; the offline
// model answers from it. hide_rag_source_filename changes only the model's text.
import { Document, HeadingLevel, Packer, Paragraph } from 'docx';
import PDFDocument from 'pdfkit';
import t from 'tap';
import { startOpenAiFixture } from '../fixtures/openai-server.js';
import { AdminClient, startTestHost } from '../helpers/host.js';
import { createSource, DOCX, ingest, uploadOk } from '../helpers/knowledge.js';
import { tokensOf } from '../helpers/sse.js';

async function pdf(lines: string[]): Promise<Uint8Array> {
  const doc = new PDFDocument();
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => doc.on('end', resolve));
  doc.fontSize(20).text('Travel policy');
  for (const line of lines) doc.moveDown().fontSize(12).text(line);
  doc.end();
  await ended;
  return new Uint8Array(Buffer.concat(chunks));
}

async function docx(): Promise<Uint8Array> {
  const document = new Document({
    sections: [
      {
        children: [
          new Paragraph({ text: 'Office guide', heading: HeadingLevel.HEADING_1 }),
          new Paragraph('The printer is on the third floor next to the kitchen.'),
          new Paragraph('Guest wifi passwords change every Monday at the reception desk.'),
        ],
      },
    ],
  });
  return new Uint8Array(await Packer.toBuffer(document));
}

t.test('a PDF and a DOCX answer questions through /stream, with their passages in rag_context', async (t) => {
  // A model that records what it is sent, to see the text the model is given.
  const fixture = await startOpenAiFixture({ respond: () => ({ chunks: ['Noted.'] }) });
  t.teardown(() => fixture.close());
  const host = await startTestHost(t, { env: { 'AGENT_HOST__PLUGINS__MODELS-OPENAI__BASE_URL': `"${fixture.url}"` } });
  const admin = new AdminClient(host.url);
  await admin.login();
  const source = await createSource(admin, { name: 'Employee handbook', chunking_strategy: 'by_title' });
  const travel = await uploadOk(admin, source.source_id, {
    filename: 'travel-policy.pdf',
    contentType: 'application/pdf',
    data: await pdf(['The hotel limit is 120 euros per night, breakfast included.', 'Book trains rather than flights for short trips.']),
  });
  const office = await uploadOk(admin, source.source_id, { filename: 'office-guide.docx', contentType: DOCX, data: await docx() });
  const job = await ingest(admin, source.source_id);
  t.equal(job.status, 'succeeded', 'both documents are ingested');
  const agent = (await admin.request('POST', '/agents', { name: 'Handbook', agent_type: 'chat', public_access_mode: 'public_anonymous' })).body;
  await admin.request('POST', `/agents/${agent.agent_id}/mounts`, { source_id: source.source_id });

  const ask = async (thread: string, message: string, model: Record<string, string> = {}, agentId: string = agent.agent_id) => {
    const { events } = await admin.stream({ thread_id: thread, agent_id: agentId, message, ...model });
    const [turn] = (await admin.request('GET', `/sessions/${thread}/turns`)).body.items;
    const context = (await admin.request('GET', `/sessions/${thread}/turns/${turn.turn_id}/context`)).body;
    return { reply: tokensOf(events), context };
  };

  const hotel = await ask('handbook-1', 'What is the hotel limit per night?');
  const [first] = hotel.context.rag_context;
  t.match(first, {
    document_id: travel.document_id,
    document_filename: 'travel-policy.pdf',
    source_id: source.source_id,
    source_name: 'Employee handbook',
    source_kind: 'standard',
    source_priority: 0,
    document_origin: 'upload',
    retrieval_mode: 'vector',
  });
  t.match(first.content, /hotel limit is 120 euros per night/, 'the PDF passage is in the turn context');
  t.match(hotel.reply, /hotel limit is 120 euros per night/, 'and the offline model answers with it');
  t.match(
    hotel.context.context_payload.retrieval,
    [{ query: 'What is the hotel limit per night?', fallback_mode: null }],
    'the search is recorded in the context payload',
  );

  const printer = await ask('handbook-2', 'Where is the printer?');
  t.match(printer.context.rag_context[0], {
    document_id: office.document_id,
    document_filename: 'office-guide.docx',
    content: /printer is on the third floor/,
  });
  t.match(printer.reply, /third floor/);
  const openai = { model_provider: 'openai', model_name: 'gpt-4o-mini' };
  const systemText = () => fixture.bodies.at(-1).messages.find((m: { role: string }) => m.role === 'system').content as string;
  await ask('handbook-3', 'Where is the printer?', openai);
  t.match(systemText(), /\[office-guide\.docx\] Office guide/, 'by default the model is shown the filename');
  await admin.request('PATCH', `/agents/${agent.agent_id}`, { hide_rag_source_filename: true });
  const hidden = await ask('handbook-4', 'Where is the printer?', openai);
  t.match(systemText(), /printer is on the third floor/, 'with the filename hidden the passage still reaches the model');
  t.notMatch(systemText(), /office-guide\.docx/, 'but not the filename');
  t.equal(hidden.context.rag_context[0].document_filename, 'office-guide.docx', 'while the turn context keeps it');

  // No vector score reaches 1, so every search of this agent answers from the keyword fallback.
  const strict = (
    await admin.request('POST', '/agents', {
      name: 'Strict handbook',
      agent_type: 'chat',
      public_access_mode: 'public_anonymous',
      retrieval_config: { score_threshold: 1 },
    })
  ).body;
  await admin.request('POST', `/agents/${strict.agent_id}/mounts`, { source_id: source.source_id });
  const fallback = await ask('handbook-5', 'What is the hotel limit per night?', {}, strict.agent_id);
  const [search] = fallback.context.context_payload.retrieval;
  t.match(
    search,
    { threshold: 1, fallback_mode: 'keyword_fallback', fallback_reason: /no vector hit scored at least 1/ },
    'the turn context records the keyword fallback',
  );
  t.ok(search.matched_words.includes('hotel') && search.matched_words.includes('limit'), `and the query words it matched (${search.matched_words.join(', ')})`);
  t.ok(fallback.context.rag_context.length > 0, 'the fallback found passages');
  t.ok(
    fallback.context.rag_context.every((c: { retrieval_mode: string }) => c.retrieval_mode === 'keyword_fallback'),
    'every rag_context entry says it came from the keyword fallback',
  );
  t.match(fallback.context.rag_context[0], {
    document_id: travel.document_id,
    document_filename: 'travel-policy.pdf',
    content: /hotel limit is 120 euros per night/,
  });
  t.ok(fallback.context.rag_context[0].matched_words.includes('hotel'), 'each passage records the words it matched');
  t.match(fallback.reply, /hotel limit is 120 euros per night/, 'and the model answers from the passage the fallback found');
});
