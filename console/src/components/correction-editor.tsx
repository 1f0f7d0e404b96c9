import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { ErrorMessage, IssueList, Loading } from './states';

type Correction = components['schemas']['Correction'];

const POLL_MS = 1000;

/** The draft form, filled from the saved draft or, before the first save, the turn's own question and answer. */
function Draft({
  correction,
  path,
  mayWrite,
}: {
  correction: Correction;
  path: { params: { path: { session_id: string; turn_id: string } } };
  mayWrite: boolean;
}) {
  const queries = useQueryClient();
  const [question, setQuestion] = useState(correction.corrected_question ?? correction.original_user_message ?? '');
  const [answer, setAnswer] = useState(correction.corrected_answer ?? correction.original_ai_answer ?? '');
  const [note, setNote] = useState(correction.correction_note ?? '');
  const refresh = () => queries.invalidateQueries({ queryKey: ['correction', path.params.path.turn_id] });
  const save = useMutation<Correction, ApiError>({
    mutationFn: () =>
      expectData(
        api.PATCH('/sessions/{session_id}/turns/{turn_id}/correction', {
          ...path,
          body: { corrected_question: question, corrected_answer: answer, correction_note: note || null },
        }),
      ),
    onSuccess: refresh,
  });
  const publish = useMutation<unknown, ApiError>({
    mutationFn: () => expectData(api.POST('/sessions/{session_id}/turns/{turn_id}/correction/publish', path)),
    onSuccess: refresh,
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    save.mutate();
  };
  return (
    <form className="form" onSubmit={submit} aria-label="Correction">
      <label htmlFor="correction-question">Question</label>
      <textarea id="correction-question" value={question} onChange={(e) => setQuestion(e.target.value)} readOnly={!mayWrite} />
      <label htmlFor="correction-answer">Right answer</label>
      <textarea id="correction-answer" value={answer} onChange={(e) => setAnswer(e.target.value)} readOnly={!mayWrite} />
      <label htmlFor="correction-note">Note</label>
      <input id="correction-note" value={note} onChange={(e) => setNote(e.target.value)} readOnly={!mayWrite} />
      {save.error && (
        <>
          <ErrorMessage error={save.error} action="save the correction" />
          <IssueList error={save.error} />
        </>
      )}
      {publish.error && <ErrorMessage error={publish.error} action="publish the correction" />}
      {mayWrite && (
        <span className="toolbar">
          <button type="submit" disabled={save.isPending}>
            Save draft
          </button>
          <button
            type="button"
            className="secondary"
            onClick={() => publish.mutate()}
            disabled={publish.isPending || correction.status === 'none' || correction.status === 'publishing'}
          >
            Publish
          </button>
        </span>
      )}
    </form>
  );
}

/**
 * A reply's correction: the question and the right answer saved as a draft, then published into the agent's
 * managed correction source (its ingestion followed until it ends), so later turns retrieve the right answer.
 */
export function CorrectionEditor({ sessionId, turnId, mayWrite }: { sessionId: string; turnId: string; mayWrite: boolean }) {
  const path = { params: { path: { session_id: sessionId, turn_id: turnId } } };
  const correction = useQuery({
    queryKey: ['correction', turnId],
    queryFn: () => expectData(api.GET('/sessions/{session_id}/turns/{turn_id}/correction', path)),
    refetchInterval: (query) => (query.state.data?.status === 'publishing' ? POLL_MS : false),
  });
  if (correction.isPending) return <Loading what="the correction" />;
  if (correction.isError) return <ErrorMessage error={correction.error} action="read the correction" />;
  const c = correction.data;
  return (
    <section aria-labelledby="correction-heading">
      <h3 id="correction-heading">Correction</h3>
      <p role="status" className="muted">
        {c.status === 'none' ? 'No correction yet.' : `${c.status}, revision ${c.revision_number}`}
        {c.published_revision_number ? ` (revision ${c.published_revision_number} published${c.source_name ? ` into ${c.source_name}` : ''})` : ''}
        {c.ingestion_job_status ? ` · indexing ${c.ingestion_job_status}` : ''}
        {c.last_error_message ? ` · ${c.last_error_message}` : ''}
      </p>
      <Draft key={`${turnId}:${c.revision_number}`} correction={c} path={path} mayWrite={mayWrite} />
    </section>
  );
}
