import { z } from 'zod';
import type { ChatMessage, ChatModel } from './models.js';

/**
 * An agent's `response_grounding_config` (spec 2.4), as validated on write. `strict`: the reply may use only the
 * turn's evidence and must cite it; `balanced`: evidence first, general knowledge only with `allow_general_knowledge`
 * (refused with `strict`, which would contradict it). `low_confidence_behavior` is what a turn with too weak evidence
 * replies; `structured_output_failure_behavior` what a structured answer that does not hold replies.
 * @beta
 */
export const groundingPolicySchema = z
  .object({
    enabled: z.boolean(),
    policy_version: z.literal('v1').default('v1'),
    mode: z.enum(['balanced', 'strict']).default('balanced'),
    allow_general_knowledge: z.boolean().default(false),
    low_confidence_behavior: z.enum(['refuse', 'clarify', 'handoff']).default('refuse'),
    structured_output_failure_behavior: z.enum(['retry_once', 'fallback_text', 'refuse']).default('retry_once'),
  })
  .strict()
  .superRefine((policy, context) => {
    if (policy.mode === 'strict' && policy.allow_general_knowledge) {
      context.addIssue({
        code: 'custom',
        path: ['allow_general_knowledge'],
        message: 'must be false when mode is strict: a strict reply uses only the evidence',
      });
    }
  });

/** A validated grounding policy. @beta */
export type GroundingPolicy = z.output<typeof groundingPolicySchema>;

/** One piece of a turn's evidence, with the id the model cites it by (`E1`, `E2`... in the order given). @beta */
export interface Evidence {
  id: string;
  kind: 'chunk' | 'correction' | 'tool_result' | 'skill_result';
  /** What the model reads. */
  text: string;
  /** The retrieval score of a chunk; null for tool and skill results. */
  score: number | null;
  source_name: string | null;
  document_id: string | null;
  /** Always recorded; shown to the model only when the agent does not hide source filenames. */
  document_filename: string | null;
  /** The tool or skill whose result this is. */
  tool_name: string | null;
}

/** A piece of evidence as the turn context and the reply's message metadata list it (`id` as `evidence_id`). @beta */
export type Citation = Omit<Evidence, 'id'> & { evidence_id: string };

/**
 * Which way a grounded turn ended: `answer` (grounded), `general_knowledge` (balanced with
 * `allow_general_knowledge`, the model said the evidence did not answer), a `low_confidence_*` behaviour, or a
 * `failure_*` behaviour after the structured answer did not hold.
 * @beta
 */
export type GroundingPath =
  'answer' | 'general_knowledge' | 'low_confidence_refuse' | 'low_confidence_clarify' | 'low_confidence_handoff' | 'failure_fallback_text' | 'failure_refuse';

/** What a grounded turn decided, recorded in `context_payload.grounding`. @beta */
export interface GroundingDecision {
  policy: GroundingPolicy;
  evidence: Citation[];
  evidence_ids: string[];
  cited_ids: string[];
  /** The model's own claim (false on a low-confidence or failure path that replaced its answer). */
  grounded: boolean;
  confidence: number | null;
  /** The reply rests on the model's general knowledge, not on the evidence. */
  general_knowledge: boolean;
  path: GroundingPath;
  /** Why the evidence was too weak: none at all, or the model said it does not answer the question. */
  low_confidence_reason: 'no_evidence' | 'not_grounded' | null;
  /** Each structured answer that did not hold, in order (`invalid_json`, `empty_answer`, `unknown_citations: E9`...). */
  failures: string[];
  /** Model calls made for the answer (0 when the evidence was too weak to ask). */
  model_calls: number;
}

/** A grounded answer to produce: the conversation without the evidence (the handle adds it), and the reply's model. @beta */
export interface GroundedAnswerRequest {
  model: ChatModel;
  messages: ChatMessage[];
  evidence: readonly Evidence[];
  signal?: AbortSignal;
}

/** A grounded turn's reply, its response source, the citations to show, and the decision. @beta */
export interface GroundedAnswer {
  reply: string;
  /** `llm_generated`, `grounding_low_confidence` or `grounding_refusal`. */
  response_source: string;
  citations: Citation[];
  decision: GroundingDecision;
}
