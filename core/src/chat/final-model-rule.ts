/** A routing slot the final (reply) stage can pick. */
export type FinalSlot = 'general_model' | 'complex_task_model' | 'reasoning_model';

/** Words that ask for reasoning rather than an answer (English and Chinese); bare "why" is too common in support chats to count. */
const REASONING_CUE =
  /\b(?:explain why|step[- ]by[- ]step|prove|derive|justify|calculat(?:e|ed|es|ing|ion)|comput(?:e|ed|es|ing|ation)|compar(?:e|ed|es|ing|ison)|analy[sz](?:e|ed|es|ing|is)|pros and cons|trade-?offs?)\b|为什么|推理|证明|分析|比较|计算|一步一步/i;

/** Longer messages count as complex tasks. */
export const COMPLEX_MESSAGE_CHARACTERS = 600;

/** A line that starts a list item: `-`, `*`, `•`, or `1.` / `1)`. */
const LIST_ITEM = /^\s*(?:[-*•]|\d+[.)])\s+\S/gm;

/**
 * The slot the final stage uses when routing is enabled (spec 4.2 rule 2),
 * from the user's message alone so the same message always routes the same
 * way: a reasoning cue picks `reasoning_model`; else a long or multi-part
 * message (several questions or list items) picks `complex_task_model`;
 * else `general_model`. The reason is recorded in `stage_decisions[]`.
 */
export function finalModelSlot(message: string): { slot: FinalSlot; reason: string } {
  const cue = REASONING_CUE.exec(message);
  if (cue) return { slot: 'reasoning_model', reason: `reasoning cue "${cue[0].toLowerCase()}"` };
  if (message.length > COMPLEX_MESSAGE_CHARACTERS) return { slot: 'complex_task_model', reason: `long message (${message.length} characters)` };
  const questions = (message.match(/[?？]/g) ?? []).length;
  if (questions >= 2) return { slot: 'complex_task_model', reason: `multi-part request (${questions} questions)` };
  const items = (message.match(LIST_ITEM) ?? []).length;
  if (items >= 2) return { slot: 'complex_task_model', reason: `multi-part request (${items} list items)` };
  return { slot: 'general_model', reason: 'short single request' };
}
