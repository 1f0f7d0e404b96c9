import { createGroundingHandle, groundingPolicySchema, type GroundedAnswer, type GroundingHandle, type Logger, type MessageType } from '@agent-host/sdk';
import type { AgentView } from '../../agents/agents.js';
import type { HostConfig } from '../../config/schema.js';

/** A turn's grounding handle, and the answer it produced (for the turn context and the reply's citations). */
export interface TurnGrounding {
  handle: GroundingHandle;
  readonly answer: GroundedAnswer | null;
}

/**
 * The agent's `response_grounding_config` as the turn applies it, with the host's `[grounding]` texts. A `rule`
 * message (a scheduled task's reminder, an automation) asks the agent to act rather than to answer from its sources,
 * so it runs without the policy. A stored policy that no longer validates (saved before validation existed) turns
 * grounding off for the turn, with a warning.
 */
export function turnGrounding(agent: AgentView | null, messageType: MessageType, config: HostConfig, log: Logger): TurnGrounding {
  const stored = agent?.agent_type === 'chat' && messageType !== 'rule' ? agent.response_grounding_config : null;
  const parsed = stored ? groundingPolicySchema.safeParse(stored) : null;
  if (parsed && !parsed.success)
    log.warn({ agent_id: agent?.agent_id, issues: parsed.error.issues }, 'the stored response_grounding_config is invalid; the turn runs without grounding');
  let answer: GroundedAnswer | null = null;
  const handle = createGroundingHandle({
    policy: parsed?.success ? parsed.data : null,
    texts: { refuse: config.grounding.refuse_text, clarify: config.grounding.clarify_text, handoff: config.grounding.handoff_text },
    hideSourceFilename: agent?.hide_rag_source_filename ?? false,
    handoffAvailable: agent?.human_takeover_enabled ?? false,
    onAnswer: (produced) => (answer = produced),
  });
  return {
    handle,
    get answer() {
      return answer;
    },
  };
}
