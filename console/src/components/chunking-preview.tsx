import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable } from './data-table';
import { inspectRunsKey } from './inspect-runs';
import { JsonField, parseJson } from './json-field';
import { ErrorMessage, IssueList } from './states';

type InspectRun = components['schemas']['InspectRunWithResults'];

const STRATEGIES = ['recursive_character', 'markdown', 'by_title'] as const;

/**
 * Another chunking tried on the source's documents without changing them: each document's chunks under the
 * candidate strategy and parameters, beside its current ones, with what the host recommends.
 */
export function ChunkingPreview({ sourceId }: { sourceId: string }) {
  const [strategy, setStrategy] = useState<string>(STRATEGIES[0]);
  const [params, setParams] = useState('');
  const [invalid, setInvalid] = useState<string>();
  const queries = useQueryClient();
  const preview = useMutation<InspectRun, ApiError, Record<string, unknown> | undefined>({
    onSuccess: () => queries.invalidateQueries({ queryKey: inspectRunsKey(sourceId) }),
    mutationFn: (parsed) =>
      expectData(
        api.POST('/knowledge-sources/{source_id}/inspect-runs', {
          params: { path: { source_id: sourceId } },
          body: { inspection_mode: 'chunking_preview', candidate_chunking_strategy: strategy, ...(parsed && { candidate_chunking_params: parsed }) },
        }),
      ),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!params.trim()) {
      setInvalid(undefined);
      preview.mutate(undefined);
      return;
    }
    const parsed = parseJson(params);
    setInvalid('error' in parsed ? parsed.error : undefined);
    if ('value' in parsed) preview.mutate(parsed.value as Record<string, unknown>);
  };
  return (
    <section aria-labelledby="chunking-heading">
      <h2 id="chunking-heading">Chunking preview</h2>
      <form className="form" onSubmit={submit} aria-label="Chunking preview">
        <label htmlFor="chunking-strategy">Strategy</label>
        <select id="chunking-strategy" value={strategy} onChange={(e) => setStrategy(e.target.value)}>
          {STRATEGIES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <JsonField id="chunking-params" label="Parameters (JSON, optional)" value={params} onChange={setParams} error={invalid} rows={3} />
        {preview.error && (
          <>
            <ErrorMessage error={preview.error} action="preview the chunking" />
            <IssueList error={preview.error} />
          </>
        )}
        <button type="submit" disabled={preview.isPending}>
          Preview chunking
        </button>
      </form>
      {preview.data && (
        <DataTable
          compact
          caption="Chunking preview by document"
          rows={preview.data.results}
          rowKey={(result) => `${result.document_id ?? ''}:${result.document_filename}`}
          columns={[
            { header: 'File', cell: (result) => result.document_filename },
            { header: 'Outcome', cell: (result) => result.outcome.replaceAll('_', ' ') },
            {
              header: 'Details',
              cell: (result) =>
                Object.entries(result.details)
                  .filter(([, value]) => typeof value !== 'object')
                  .map(([name, value]) => `${name.replaceAll('_', ' ')} ${String(value)}`)
                  .join(' · '),
            },
            { header: 'Recommended', cell: (result) => result.recommendations.map((r) => r.reason).join('; ') },
          ]}
        />
      )}
    </section>
  );
}
