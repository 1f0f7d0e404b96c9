import type { Citation, Evidence, GroundedAnswer, GroundedAnswerRequest, GroundingDecision, GroundingPath, GroundingPolicy } from '../extensions/grounding.js';
import type { ChatMessage } from '../extensions/models.js';
import type { EvidenceInput, GroundingHandle, TurnEvent } from '../extensions/orchestrators.js';
import { streamStructured, type AnswerFields, type AttemptOutcome, type Judgement } from './answer-stream.js';
import { buildEvidence, evidenceSection } from './evidence.js';

/** What a grounded turn says on its low-confidence and refusal paths. @beta */
export interface GroundingTexts {
  refuse: string;
  clarify: string;
  handoff: string;
}

/** The texts a host uses unless it configures its own (`[grounding]`). @beta */
export const DEFAULT_GROUNDING_TEXTS: GroundingTexts = Object.freeze({
  refuse: "I'm sorry, I can't answer that from the information I have.",
  clarify: "I couldn't find that in the information I have. Could you tell me a little more about what you need?",
  handoff: "I can't answer that from the information I have, so a person from our team will follow up here.",
});

/**
 * The structured answer a grounded reply asks for, its keys in the order they are written: the verdict and the
 * citations come before the answer, so they are known before any of its text is shown.
 * @beta
 */
export const GROUNDED_ANSWER_SCHEMA = Object.freeze({
  name: 'grounded_answer',
  schema: Object.freeze({
    type: 'object',
    properties: {
      grounded: { type: 'boolean' },
      confidence: { type: 'number' },
      citations: { type: 'array', items: { type: 'string' } },
      answer: { type: 'string' },
    },
    required: ['grounded', 'confidence', 'citations', 'answer'],
    additionalProperties: false,
  }),
});

/** How {@link createGroundingHandle} applies a policy. @beta */
export interface GroundingHandleOptions {
  /** The agent's validated policy; null or `enabled: false` turns grounding off. */
  policy: GroundingPolicy | null;
  texts?: Partial<GroundingTexts>;
  /** The agent hides source filenames from the model (`hide_rag_source_filename`); the decision still records them. */
  hideSourceFilename?: boolean;
  /** The agent allows human takeover, so `handoff` can promise a person; otherwise it refuses. */
  handoffAvailable?: boolean;
  /** Called with each finished answer (core records it in the turn context and the reply's metadata). */
  onAnswer?: (answer: GroundedAnswer) => void;
}

type Verdict = { kind: 'answer'; general_knowledge: boolean } | { kind: 'low_confidence' } | { kind: 'failure'; reason: string };

function instructions(policy: GroundingPolicy): string {
  const format =
    'Reply with one JSON object and nothing else, its keys in this order: "grounded" (true when the evidence answers the message), ' +
    '"confidence" (0 to 1), "citations" (the ids of the evidence the answer uses, for example ["E1"]), "answer" (the reply to the user, in plain text, without evidence ids).';
  if (policy.mode === 'strict') {
    return `${format} Use only the evidence. When it does not answer the message, reply {"grounded": false, "confidence": 0, "citations": [], "answer": ""}.`;
  }
  return policy.allow_general_knowledge
    ? `${format} Answer from the evidence when it answers the message. When it does not, you may answer from general knowledge: then set "grounded" to false and cite nothing.`
    : `${format} Answer from the evidence and the conversation. When the evidence does not answer the message, set "grounded" to false and leave "answer" empty.`;
}

/** A reply that did not come from the model, streamed word by word like one. */
function* words(reply: string): Generator<TurnEvent> {
  for (const content of reply.split(/(?<= )/)) if (content) yield { type: 'token', content };
}

/**
 * The SDK's grounding policy, for core and for any orchestrator: builds the evidence, asks the reply's model for a
 * structured answer with citations, streams its text as it is written, and takes the low-confidence or failure path
 * the policy names. Core creates one per turn; `fakeGrounding` in `@agent-host/sdk/testing` wraps the same logic.
 * @beta
 */
export function createGroundingHandle(options: GroundingHandleOptions): GroundingHandle {
  const policy = options.policy?.enabled ? options.policy : null;
  const texts = { ...DEFAULT_GROUNDING_TEXTS, ...options.texts };
  const hide = options.hideSourceFilename ?? false;
  return {
    policy,
    evidence: (input: EvidenceInput) => buildEvidence(input),
    async *answer(request: GroundedAnswerRequest): AsyncGenerator<TurnEvent, GroundedAnswer, void> {
      if (!policy) throw new Error('grounding is not enabled for this turn; check handle.policy first');
      const answer = yield* groundedAnswer(policy, texts, hide, options.handoffAvailable ?? false, request);
      options.onAnswer?.(answer);
      return answer;
    },
  };
}

async function* groundedAnswer(
  policy: GroundingPolicy,
  texts: GroundingTexts,
  hide: boolean,
  handoffAvailable: boolean,
  request: GroundedAnswerRequest,
): AsyncGenerator<TurnEvent, GroundedAnswer, void> {
  const { model, evidence, signal } = request;
  const ids = new Set(evidence.map((item) => item.id));
  const record: GroundingDecision = {
    policy,
    evidence: evidence.map(citationOf),
    evidence_ids: [...ids],
    cited_ids: [],
    grounded: false,
    confidence: null,
    general_knowledge: false,
    path: 'answer',
    low_confidence_reason: null,
    failures: [],
    model_calls: 0,
  };
  const done = (reply: string, path: GroundingPath, response_source: string): GroundedAnswer => {
    record.path = path;
    const cited = new Set(record.cited_ids);
    return { reply, response_source, citations: record.evidence.filter((c) => cited.has(c.evidence_id)), decision: record };
  };

  const lowConfidence = async function* (reason: 'no_evidence' | 'not_grounded'): AsyncGenerator<TurnEvent, GroundedAnswer, void> {
    record.low_confidence_reason = reason;
    record.cited_ids = [];
    if (policy.low_confidence_behavior === 'clarify') {
      record.model_calls += 1;
      let question = '';
      const ask: ChatMessage = {
        role: 'system',
        content:
          'The information available does not answer the last message. Ask the user exactly one short question that would help find the answer. Reply with the question only.',
      };
      for await (const chunk of model.stream([...request.messages, ask], { signal })) if (chunk.type === 'token') question += chunk.content;
      // Anything but one short question (the offline model's statement, an answer) gives the configured question.
      const reply = question.trim().endsWith('?') && question.length <= 300 ? question.trim() : texts.clarify;
      yield* words(reply);
      return done(reply, 'low_confidence_clarify', 'grounding_low_confidence');
    }
    const handoff = policy.low_confidence_behavior === 'handoff' && handoffAvailable;
    const reply = handoff ? texts.handoff : texts.refuse;
    yield* words(reply);
    return done(reply, handoff ? 'low_confidence_handoff' : 'low_confidence_refuse', 'grounding_low_confidence');
  };

  if (evidence.length === 0 && !(policy.mode === 'balanced' && policy.allow_general_knowledge)) return yield* lowConfidence('no_evidence');

  const verdict = (fields: AnswerFields): Verdict => {
    if (typeof fields.grounded !== 'boolean') return { kind: 'failure', reason: 'invalid_fields: grounded is not true or false' };
    if (!Array.isArray(fields.citations) || fields.citations.some((id) => typeof id !== 'string')) {
      return { kind: 'failure', reason: 'invalid_fields: citations is not a list of evidence ids' };
    }
    const unknown = (fields.citations as string[]).filter((id) => !ids.has(id));
    if (unknown.length) return { kind: 'failure', reason: `unknown_citations: ${unknown.join(', ')}` };
    if (policy.mode === 'strict')
      return fields.grounded && fields.citations.length > 0 ? { kind: 'answer', general_knowledge: false } : { kind: 'low_confidence' };
    if (fields.grounded) return { kind: 'answer', general_knowledge: false };
    return policy.allow_general_knowledge ? { kind: 'answer', general_knowledge: true } : { kind: 'low_confidence' };
  };
  const fallback = policy.structured_output_failure_behavior === 'fallback_text';
  const judge = (fields: AnswerFields): Judgement => {
    if (fields.grounded === undefined || fields.citations === undefined) return 'wait';
    const kind = verdict(fields).kind;
    // A failing answer is still read whole when its text may become the fallback.
    return kind === 'answer' ? 'stream' : kind === 'failure' && fallback ? 'wait' : 'stop';
  };

  const system: ChatMessage = { role: 'system', content: `${evidenceSection(evidence, hide)}\n\n${instructions(policy)}` };
  const messages = [...request.messages.filter((m) => m.role === 'system'), system, ...request.messages.filter((m) => m.role !== 'system')];
  const attempts = policy.structured_output_failure_behavior === 'retry_once' ? 2 : 1;
  let last: AttemptOutcome | undefined;
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const retry: ChatMessage[] = last
      ? [
          {
            role: 'user',
            content: `Your last reply could not be used (${record.failures.at(-1)}). Reply again with only the JSON object, citing only ids from the evidence.`,
          },
        ]
      : [];
    record.model_calls += 1;
    last = yield* streamStructured(model, [...messages, ...retry], { signal, responseSchema: GROUNDED_ANSWER_SCHEMA }, judge, fallback);
    const { fields } = last;
    record.grounded = fields.grounded === true;
    record.confidence = typeof fields.confidence === 'number' ? fields.confidence : null;
    if (last.streamed) {
      // The answer is on the user's screen already: it stands; a broken ending is recorded.
      if (last.json !== 'complete') record.failures.push(`${last.json}_json after the answer began`);
      return accepted(last, verdict(fields));
    }
    const outcome: Verdict = last.json === 'invalid' ? { kind: 'failure', reason: 'invalid_json' } : verdict(fields);
    if (outcome.kind === 'low_confidence') return yield* lowConfidence('not_grounded');
    if (outcome.kind === 'answer' && !fields.answer?.trim()) {
      record.failures.push(last.json === 'complete' ? 'empty_answer' : 'incomplete_json');
      continue;
    }
    if (outcome.kind === 'failure') {
      record.failures.push(outcome.reason);
      continue;
    }
    // Read whole before it was judged (the model wrote the answer before its verdict): shown now.
    yield* words(fields.answer!);
    last.streamed = fields.answer!;
    return accepted(last, outcome);
  }

  function accepted(outcome: AttemptOutcome, verdict: Verdict): GroundedAnswer {
    record.cited_ids = (outcome.fields.citations as string[] | undefined)?.filter((id) => ids.has(id)) ?? [];
    record.general_knowledge = verdict.kind === 'answer' && verdict.general_knowledge;
    return done(outcome.streamed, record.general_knowledge ? 'general_knowledge' : 'answer', 'llm_generated');
  }

  record.grounded = false;
  if (fallback && last) {
    const text = typeof last.fields.answer === 'string' && last.fields.answer.trim() ? last.fields.answer : last.json === 'invalid' ? last.raw.trim() : '';
    if (text) {
      record.cited_ids = Array.isArray(last.fields.citations) ? last.fields.citations.filter((id): id is string => typeof id === 'string' && ids.has(id)) : [];
      yield* words(text);
      return done(text, 'failure_fallback_text', 'llm_generated');
    }
  }
  yield* words(texts.refuse);
  return done(texts.refuse, 'failure_refuse', 'grounding_refusal');
}

const citationOf = (item: Evidence): Citation => ({
  evidence_id: item.id,
  kind: item.kind,
  text: item.text,
  score: item.score,
  source_name: item.source_name,
  document_id: item.document_id,
  document_filename: item.document_filename,
  tool_name: item.tool_name,
});
