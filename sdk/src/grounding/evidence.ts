import type { Evidence } from '../extensions/grounding.js';
import type { EvidenceInput } from '../extensions/orchestrators.js';

const text = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/**
 * The turn's evidence in a stable order (retrieved chunks as retrieval ranked them, then tool results, then skill
 * results), numbered `E1`, `E2`... A failed tool call is not evidence: it answers nothing.
 */
export function buildEvidence(input: EvidenceInput): Evidence[] {
  const items: Omit<Evidence, 'id'>[] = [
    ...(input.chunks ?? []).map((chunk) => ({
      kind: chunk.metadata.document_origin === 'managed_correction' ? ('correction' as const) : ('chunk' as const),
      text: chunk.content,
      score: chunk.score,
      source_name: chunk.source_name,
      document_id: chunk.document_id,
      document_filename: chunk.document_filename,
      tool_name: null,
    })),
    ...(input.tool_results ?? [])
      .filter((result) => result.status === 'success')
      .map((result) => ({
        kind: 'tool_result' as const,
        text: text(result.result),
        score: null,
        source_name: null,
        document_id: null,
        document_filename: null,
        tool_name: result.tool_name,
      })),
    ...(input.skill_results ?? []).map((result) => ({
      kind: 'skill_result' as const,
      text: text(result.result),
      score: null,
      source_name: null,
      document_id: null,
      document_filename: null,
      tool_name: result.name,
    })),
  ];
  return items.map((item, index) => ({ id: `E${index + 1}`, ...item }));
}

function label(item: Evidence, hideFilename: boolean): string {
  if (item.kind === 'correction') return 'verified correction';
  if (item.kind === 'tool_result') return `tool result: ${item.tool_name}`;
  if (item.kind === 'skill_result') return `skill result: ${item.tool_name}`;
  const file = !hideFilename && item.document_filename ? `; file: ${item.document_filename}` : '';
  return `source: ${item.source_name}${file}`;
}

/**
 * The evidence as the model reads it: one block per item, `[E1] (source: ...) text`, its blank lines folded so a
 * block is one passage. The filename is left out when the agent hides source filenames.
 */
export function evidenceSection(evidence: readonly Evidence[], hideFilename: boolean): string {
  if (evidence.length === 0) return 'Evidence: none was found for this message.';
  const blocks = evidence.map((item) => `[${item.id}] (${label(item, hideFilename)}) ${item.text.replace(/\n\s*\n/g, '\n').trim()}`);
  return `Evidence (cite it by id; passages marked verified correction are operators' corrections and take precedence):\n\n${blocks.join('\n\n')}`;
}
