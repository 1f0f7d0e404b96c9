import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { parseJson } from '../components/json-field';
import { ErrorMessage, Loading } from '../components/states';
import { useCan, useSession } from '../session';

type Field = components['schemas']['FieldReview'];
type Run = components['schemas']['DocumentRecognitionRun'];
type Change = { value?: unknown; review_status?: 'accepted' | 'rejected' | 'unreviewed' };

const POLL_MS = 1000;
const ENDED = new Set<Run['status']>(['succeeded', 'failed']);

const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** A field's revisions, oldest first: what changed, from what, by whom. */
function Revisions({ runId, fieldId }: { runId: string; fieldId: string }) {
  const timeline = useQuery({
    queryKey: ['field-revisions', runId, fieldId],
    queryFn: () =>
      expectData(
        api.GET('/admin/document-recognition/runs/{recognition_run_id}/field-reviews/{field_id}/revisions', {
          params: { path: { recognition_run_id: runId, field_id: fieldId } },
        }),
      ),
  });
  if (timeline.isPending) return <Loading what="the revisions" />;
  if (timeline.isError) return <ErrorMessage error={timeline.error} action="read the revisions" />;
  const t = timeline.data;
  return (
    <ol aria-label={`Revisions of ${t.label}`}>
      <li>
        extracted {shown(t.baseline.value)}
        {t.baseline.page_number ? ` on page ${t.baseline.page_number}` : ''}
      </li>
      {t.revisions.map((revision) => (
        <li key={revision.revision_id}>
          {revision.review_status} {shown(revision.value)}
          {revision.reviewer_note ? ` (${revision.reviewer_note})` : ''}
          {revision.reviewer_identity?.display_name ? ` by ${String(revision.reviewer_identity.display_name)}` : ''}, <When at={revision.created_at} />
        </li>
      ))}
      {t.history_status === 'unrecorded' && <li>Changes made before the ledger existed were not kept.</li>}
    </ol>
  );
}

/**
 * One field's review: accept the extracted value, correct it (typed as text, or as JSON for numbers and lists),
 * reject it, or undo; with a note, and its revisions on request.
 */
function FieldReview({ runId, field, mayReview }: { runId: string; field: Field; mayReview: boolean }) {
  const queries = useQueryClient();
  const session = useSession();
  const [correcting, setCorrecting] = useState(false);
  const [text, setText] = useState(shown(field.current_value));
  const [note, setNote] = useState(field.reviewer_note ?? '');
  const [history, setHistory] = useState(false);
  const review = useMutation<unknown, ApiError, Change>({
    mutationFn: (change) =>
      expectData(
        api.PATCH('/admin/document-recognition/runs/{recognition_run_id}/field-reviews/{field_id}', {
          params: { path: { recognition_run_id: runId, field_id: field.field_id } },
          body: { ...change, reviewer_note: note || null, reviewer_identity: { display_name: session.display_name || session.username } },
        }),
      ),
    onSuccess: async () => {
      setCorrecting(false);
      await queries.invalidateQueries({ queryKey: ['recognition-run', runId] });
      await queries.invalidateQueries({ queryKey: ['field-revisions', runId, field.field_id] });
    },
  });
  // A correction that reads as JSON (a number, a list) is sent as that value; anything else as the text typed.
  const correction = () => {
    const parsed = parseJson(text);
    return 'value' in parsed && typeof field.extracted_value !== 'string' ? parsed.value : text;
  };
  return (
    <div className="field-review">
      {mayReview && (
        <span className="toolbar">
          <button type="button" className="secondary" onClick={() => review.mutate({ review_status: 'accepted' })} aria-label={`Accept ${field.label}`}>
            Accept
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => setCorrecting(!correcting)}
            aria-expanded={correcting}
            aria-label={`Correct ${field.label}`}
          >
            Correct
          </button>
          <button type="button" className="secondary" onClick={() => review.mutate({ review_status: 'rejected' })} aria-label={`Reject ${field.label}`}>
            Reject
          </button>
          {field.review_status !== 'unreviewed' && (
            <button
              type="button"
              className="secondary"
              onClick={() => review.mutate({ review_status: 'unreviewed' })}
              aria-label={`Undo the review of ${field.label}`}
            >
              Undo
            </button>
          )}
          <button type="button" className="link" onClick={() => setHistory(!history)} aria-pressed={history}>
            {field.revision_count} revisions
          </button>
        </span>
      )}
      {mayReview && (
        <span className="toolbar">
          <label htmlFor={`note-${field.field_id}`}>Note</label>
          <input id={`note-${field.field_id}`} aria-label={`Note on ${field.label}`} value={note} onChange={(e) => setNote(e.target.value)} />
        </span>
      )}
      {correcting && (
        <form
          className="toolbar"
          onSubmit={(e) => {
            e.preventDefault();
            review.mutate({ value: correction() });
          }}
          aria-label={`Correct ${field.label}`}
        >
          <label htmlFor={`value-${field.field_id}`}>Right value</label>
          <input id={`value-${field.field_id}`} value={text} onChange={(e) => setText(e.target.value)} />
          <button type="submit" disabled={review.isPending}>
            Save
          </button>
        </form>
      )}
      {review.error && <ErrorMessage error={review.error} action={`review ${field.label}`} />}
      {history && <Revisions runId={runId} fieldId={field.field_id} />}
    </div>
  );
}

/**
 * One document-recognition run: its state (followed while it runs), the document, its PDF and previews, the fields
 * extracted with their confidence and page, each reviewed in place, the issues found, and the result as JSON.
 */
export function DocumentRunPage() {
  const runId = useParams().runId!;
  const mayReview = useCan('document_recognition.write');
  const run = useQuery({
    queryKey: ['recognition-run', runId],
    queryFn: () => expectData(api.GET('/admin/document-recognition/runs/{recognition_run_id}', { params: { path: { recognition_run_id: runId } } })),
    refetchInterval: (query) => (query.state.data && ENDED.has(query.state.data.status) ? false : POLL_MS),
  });
  if (run.isPending) return <Loading what="the run" />;
  if (run.isError) return <ErrorMessage error={run.error} action="read the run" />;
  const r = run.data;
  return (
    <>
      <h1>{r.source_filename}</h1>
      <p className="muted">
        {r.runtime_agent_name} · {r.source_content_type} · {Math.ceil(r.source_size_bytes / 1024)} KiB · uploaded <When at={r.created_at} />
      </p>
      <dl className="facts">
        <dt>Status</dt>
        <dd>
          <span role="status">
            {r.status}
            {r.heartbeat_stale ? ' (heartbeat stale)' : ''}
            {r.error ? `: ${r.error.code}, ${r.error.message}` : ''}
          </span>
        </dd>
        <dt>Review</dt>
        <dd>
          {r.review_state.replace('_', ' ')}: {r.reviewed_field_count} of {r.field_count} fields
        </dd>
        <dt>Pages</dt>
        <dd>{r.page_count ?? '—'}</dd>
        <dt>Files</dt>
        <dd className="toolbar">
          {r.source_document_url && <a href={r.source_document_url}>Document</a>}
          {r.source_pdf_url && <a href={r.source_pdf_url}>PDF</a>}
          {r.result_download_url && <a href={r.result_download_url}>Result (JSON)</a>}
        </dd>
      </dl>
      {r.issue_list.length > 0 && (
        <section aria-labelledby="issues-heading">
          <h2 id="issues-heading">Issues</h2>
          <ul>
            {r.issue_list.map((issue, i) => (
              <li key={i}>
                {issue.severity}: {issue.message}
              </li>
            ))}
          </ul>
        </section>
      )}
      {r.field_reviews.length > 0 && (
        <section aria-labelledby="fields-heading">
          <h2 id="fields-heading">Fields</h2>
          <DataTable
            compact
            rows={r.field_reviews}
            rowKey={(field) => field.field_id}
            columns={[
              { header: 'Field', cell: (field) => field.label },
              { header: 'Extracted', cell: (field) => shown(field.extracted_value) },
              { header: 'Confidence', cell: (field) => (field.confidence === null ? '—' : `${Math.round(field.confidence * 100)} %`) },
              { header: 'Page', cell: (field) => field.page_number ?? '—' },
              { header: 'Value', cell: (field) => shown(field.current_value) },
              { header: 'Review', cell: (field) => `${field.review_status}${field.reviewer_note ? `: ${field.reviewer_note}` : ''}` },
              { header: 'Actions', cell: (field) => <FieldReview runId={runId} field={field} mayReview={mayReview} /> },
            ]}
          />
        </section>
      )}
      {r.preview_pages.length > 0 && (
        <section aria-labelledby="previews-heading">
          <h2 id="previews-heading">Pages</h2>
          <div className="previews">
            {r.preview_pages.map((page) =>
              page.url ? (
                <img key={page.page_number} src={page.url} width={page.width} height={page.height} alt={`Page ${page.page_number} of ${r.source_filename}`} />
              ) : null,
            )}
          </div>
        </section>
      )}
    </>
  );
}
