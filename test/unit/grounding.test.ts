// The SDK's grounding policy (sdk/src/grounding): evidence ids, the structured answer streamed as it is written, and
// every low-confidence and failure path, driven by a model that answers grounded, ungrounded, invalid-JSON and
// hallucinated-citation replies.
import t from 'tap';
import { ValidationError, groundingPolicySchema, validate, type RetrievedChunk, type TurnEvent } from '@agent-host/sdk';
import { fakeGrounding, runTurn, scriptedModel, type ScriptedAnswer } from '@agent-host/sdk/testing';

const chunk = (content: string, extra: Partial<RetrievedChunk> = {}): RetrievedChunk => ({
  content,
  score: 0.8,
  source_id: 'src-1',
  source_name: 'Handbook',
  document_id: 'doc-1',
  document_filename: 'returns.pdf',
  metadata: {},
  ...extra,
});
const CHUNKS = [chunk('Returns are accepted within 30 days.'), chunk('Refunds take five days.', { score: 0.6 })];
const MESSAGES = [
  { role: 'system' as const, content: 'You help with returns.' },
  { role: 'user' as const, content: 'How long do I have to return an item?' },
];
/** A structured answer split into small tokens, as a model streams it. */
const json = (value: unknown): ScriptedAnswer => ({ tokens: JSON.stringify(value).match(/.{1,6}/gs)! });
const GROUNDED = { grounded: true, confidence: 0.9, citations: ['E1'], answer: 'You have 30 days to return an item.' };

async function answer(
  config: Record<string, unknown>,
  script: ScriptedAnswer[],
  options: { chunks?: RetrievedChunk[]; handoff?: boolean; hide?: boolean } = {},
) {
  const grounding = fakeGrounding({ enabled: true, ...config }, { handoffAvailable: options.handoff, hideSourceFilename: options.hide });
  const model = scriptedModel(script);
  const evidence = grounding.evidence({ chunks: options.chunks ?? CHUNKS });
  const { events, result } = await runTurn(grounding.answer({ model, messages: MESSAGES, evidence }));
  const streamed = events.map((e: TurnEvent) => e.content).join('');
  return { result, streamed, model, decision: result.decision, grounding };
}

t.test('the policy: defaults filled in, contradictions and unknown values refused naming the field', async (t) => {
  t.same(groundingPolicySchema.parse({ enabled: true }), {
    enabled: true,
    policy_version: 'v1',
    mode: 'balanced',
    allow_general_knowledge: false,
    low_confidence_behavior: 'refuse',
    structured_output_failure_behavior: 'retry_once',
  });
  const fields = (config: unknown) => {
    try {
      validate(groundingPolicySchema, config, ['body', 'response_grounding_config']);
    } catch (error) {
      if (error instanceof ValidationError) return error.issues.map((issue) => issue.loc.join('.'));
      throw error;
    }
    return [];
  };
  t.same(fields({ enabled: true, mode: 'strict', allow_general_knowledge: true }), ['body.response_grounding_config.allow_general_knowledge']);
  t.same(fields({ enabled: true, mode: 'loose' }), ['body.response_grounding_config.mode']);
  t.same(fields({ enabled: true, policy_version: 'v2' }), ['body.response_grounding_config.policy_version']);
  t.same(fields({ enabled: true, low_confidence_behavior: 'shrug' }), ['body.response_grounding_config.low_confidence_behavior']);
  t.same(fields({ enabled: true, structured_output_failure_behavior: 'retry_forever' }), ['body.response_grounding_config.structured_output_failure_behavior']);
  t.same(fields({ enabled: true, colour: 'red' }), ['body.response_grounding_config']);
});

t.test('evidence: stable ids in order, corrections and tool results marked, failed tools left out, filenames hidden from the model only', async (t) => {
  const grounding = fakeGrounding({ enabled: true });
  const evidence = grounding.evidence({
    chunks: [chunk('Use form R-2.', { metadata: { document_origin: 'managed_correction' } }), CHUNKS[0]!],
    tool_results: [
      { tool_name: 'get_order', status: 'success', result: { status: 'shipped' } },
      { tool_name: 'get_invoice', status: 'error', result: { error_message: 'down' } },
    ],
    skill_results: [{ name: 'faq', result: 'Open 9 to 5.' }],
  });
  t.same(
    evidence.map((e) => [e.id, e.kind, e.tool_name]),
    [
      ['E1', 'correction', null],
      ['E2', 'chunk', null],
      ['E3', 'tool_result', 'get_order'],
      ['E4', 'skill_result', 'faq'],
    ],
  );
  const seen = async (hide: boolean) => {
    const { model } = await answer({}, [json(GROUNDED)], { hide });
    return model.calls[0]!.messages.map((m) => m.content).join('\n');
  };
  t.match(await seen(false), '[E1] (source: Handbook; file: returns.pdf) Returns are accepted within 30 days.');
  const hidden = await seen(true);
  t.match(hidden, '[E1] (source: Handbook) Returns are accepted');
  t.notMatch(hidden, 'returns.pdf');
  const { decision } = await answer({}, [json(GROUNDED)], { hide: true });
  t.equal(decision.evidence[0]!.document_filename, 'returns.pdf', 'the decision keeps the filename the model did not see');
});

t.test('a grounded answer streams its text while the model writes it, with its citations', async (t) => {
  const { result, streamed, model, decision } = await answer({ mode: 'strict' }, [json(GROUNDED)]);
  t.equal(result.reply, GROUNDED.answer);
  t.equal(streamed, GROUNDED.answer);
  t.equal(result.response_source, 'llm_generated');
  t.same(
    result.citations.map((c) => [c.evidence_id, c.document_id, c.score, c.text]),
    [['E1', 'doc-1', 0.8, 'Returns are accepted within 30 days.']],
  );
  t.match(decision, { path: 'answer', grounded: true, confidence: 0.9, cited_ids: ['E1'], evidence_ids: ['E1', 'E2'], failures: [], model_calls: 1 });
  t.same(model.calls[0]!.options?.responseSchema?.name, 'grounded_answer');

  // The first token leaves before the model has written the rest of the answer.
  const grounding = fakeGrounding({ enabled: true, mode: 'strict' });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const tokens = ['{"grounded":true,"confidence":0.9,"citations":["E1"],"answer":"You have', ' 30 days', '."}'];
  const slow = scriptedModel([{ tokens }], { beforeToken: (i) => (i === 2 ? held : Promise.resolve()) });
  const run = grounding.answer({ model: slow, messages: MESSAGES, evidence: grounding.evidence({ chunks: CHUNKS }) });
  const first = await run.next();
  t.same(first.value, { type: 'token', content: 'You have' }, 'the first words are out while the model holds the rest');
  release();
  const rest = await runTurn(run);
  t.equal(rest.result.reply, 'You have 30 days.');
});

t.test('strict: no evidence, an ungrounded or uncited answer take the low-confidence path', async (t) => {
  const none = await answer({ mode: 'strict' }, [json(GROUNDED)], { chunks: [] });
  t.equal(none.model.calls.length, 0, 'no model call without evidence');
  t.match(none.decision, { path: 'low_confidence_refuse', low_confidence_reason: 'no_evidence' });
  t.equal(none.result.response_source, 'grounding_low_confidence');
  t.equal(none.streamed, none.result.reply);

  const ungrounded = await answer({ mode: 'strict' }, [json({ grounded: false, confidence: 0.1, citations: [], answer: 'Probably 14 days.' })]);
  t.match(ungrounded.decision, { path: 'low_confidence_refuse', low_confidence_reason: 'not_grounded', cited_ids: [] });
  t.notMatch(ungrounded.streamed, '14 days', 'the ungrounded words never reach the user');

  const uncited = await answer({ mode: 'strict' }, [json({ grounded: true, confidence: 0.7, citations: [], answer: 'Probably 14 days.' })]);
  t.match(uncited.decision, { path: 'low_confidence_refuse' });
});

t.test('balanced: general knowledge only when allowed, and marked', async (t) => {
  const general = { grounded: false, confidence: 0.4, citations: [], answer: 'Most shops allow 14 days.' };
  const allowed = await answer({ mode: 'balanced', allow_general_knowledge: true }, [json(general)]);
  t.equal(allowed.result.reply, general.answer);
  t.match(allowed.decision, { path: 'general_knowledge', general_knowledge: true, grounded: false });

  const noEvidence = await answer({ mode: 'balanced', allow_general_knowledge: true }, [json(general)], { chunks: [] });
  t.equal(noEvidence.model.calls.length, 1, 'with general knowledge allowed the model is asked even without evidence');
  t.match(noEvidence.decision, { path: 'general_knowledge' });

  const refused = await answer({ mode: 'balanced' }, [json(general)]);
  t.match(refused.decision, { path: 'low_confidence_refuse', low_confidence_reason: 'not_grounded' });

  const conversational = await answer({ mode: 'balanced' }, [json({ grounded: true, confidence: 0.8, citations: [], answer: 'Glad to help!' })]);
  t.match(conversational.decision, { path: 'answer', cited_ids: [] }, 'balanced accepts a grounded answer that cites nothing');
});

t.test('low-confidence behaviours: refuse, clarify with one question, handoff only where a person can follow up', async (t) => {
  const noEvidence = { chunks: [] as RetrievedChunk[] };
  const clarify = await answer({ low_confidence_behavior: 'clarify' }, [{ tokens: ['Which ', 'item ', 'is it?'] }], noEvidence);
  t.equal(clarify.result.reply, 'Which item is it?');
  t.match(clarify.decision, { path: 'low_confidence_clarify', model_calls: 1 });
  const statement = await answer({ low_confidence_behavior: 'clarify' }, [{ tokens: ['I do not know.'] }], noEvidence);
  t.match(statement.result.reply, /Could you tell me a little more/, 'a reply that is not a question gives the configured question');

  const handoff = await answer({ low_confidence_behavior: 'handoff' }, [], { ...noEvidence, handoff: true });
  t.match(handoff.decision, { path: 'low_confidence_handoff' });
  t.match(handoff.result.reply, /a person from our team will follow up/);
  const noTakeover = await answer({ low_confidence_behavior: 'handoff' }, [], noEvidence);
  t.match(noTakeover.decision, { path: 'low_confidence_refuse' }, 'without human takeover a handoff would promise nobody: it refuses');
});

t.test('failures: invalid JSON, an empty answer and hallucinated citations, by each behaviour', async (t) => {
  const hallucinated = json({ grounded: true, confidence: 0.9, citations: ['E1', 'E9'], answer: 'Sixty days.' });
  const retried = await answer({ structured_output_failure_behavior: 'retry_once' }, [hallucinated, json(GROUNDED)]);
  t.equal(retried.result.reply, GROUNDED.answer);
  t.match(retried.decision, { path: 'answer', failures: ['unknown_citations: E9'], model_calls: 2 });
  t.notMatch(retried.streamed, 'Sixty', 'the rejected answer was never streamed');
  t.match(retried.model.calls[1]!.messages.at(-1)!.content, /could not be used \(unknown_citations: E9\)/);

  const twice = await answer({ structured_output_failure_behavior: 'retry_once' }, [{ tokens: ['Thirty ', 'days.'] }, { tokens: ['not json'] }]);
  t.match(twice.decision, { path: 'failure_refuse', failures: ['invalid_json', 'invalid_json'] });
  t.equal(twice.result.response_source, 'grounding_refusal');

  const fallback = await answer({ structured_output_failure_behavior: 'fallback_text' }, [{ tokens: ['You have ', '30 days.'] }]);
  t.equal(fallback.result.reply, 'You have 30 days.');
  t.match(fallback.decision, { path: 'failure_fallback_text', failures: ['invalid_json'], model_calls: 1 });
  const fallbackCited = await answer({ structured_output_failure_behavior: 'fallback_text' }, [hallucinated]);
  t.match(fallbackCited.decision, { path: 'failure_fallback_text', cited_ids: ['E1'] }, 'the fallback keeps only citations of real evidence');

  const empty = await answer({ structured_output_failure_behavior: 'refuse' }, [json({ grounded: true, confidence: 1, citations: ['E1'], answer: '' })]);
  t.match(empty.decision, { path: 'failure_refuse', failures: ['empty_answer'], model_calls: 1 });

  const fenced = await answer({}, [{ tokens: ['```json\n', JSON.stringify(GROUNDED), '\n```'] }]);
  t.match(fenced.decision, { path: 'answer', failures: [] }, 'a Markdown fence around the object is read through');

  const reordered = await answer({}, [json({ answer: 'You have 30 days.', citations: ['E1'], grounded: true, confidence: 0.8 })]);
  t.equal(reordered.result.reply, 'You have 30 days.', 'an answer written before its verdict is read whole, then shown');
  t.equal(reordered.streamed, 'You have 30 days.');

  const truncated = await answer({}, [{ tokens: ['{"grounded":true,"confidence":0.9,"citations":["E1"],"answer":"You have 30'] }]);
  t.equal(truncated.result.reply, 'You have 30', 'text already shown stands');
  t.match(truncated.decision, { path: 'answer', failures: ['incomplete_json after the answer began'] });
});
