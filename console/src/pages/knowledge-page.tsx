import { useInfiniteQuery, useMutation, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link } from 'react-router';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

/** A new standard source, with the host's default chunking. */
function NewSource() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const queries = useQueryClient();
  const create = useMutation<unknown, ApiError>({
    mutationFn: () => expectData(api.POST('/knowledge-sources', { body: { name, ...(description && { description }) } })),
    onSuccess: async () => {
      setName('');
      setDescription('');
      await queries.invalidateQueries({ queryKey: ['knowledge-sources'] });
    },
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form className="form" onSubmit={submit} aria-label="New source">
      <h2>New source</h2>
      <label htmlFor="source-name">Name</label>
      <input id="source-name" value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="source-description">Description</label>
      <textarea id="source-description" value={description} onChange={(e) => setDescription(e.target.value)} />
      {create.error && <ErrorMessage error={create.error} action="create the source" />}
      <button type="submit" disabled={create.isPending}>
        Create source
      </button>
    </form>
  );
}

/** Knowledge sources, newest first; each opens its documents, uploads and ingestion jobs. */
export function KnowledgePage() {
  const mayWrite = useCan('knowledge.write');
  const sources = useInfiniteQuery({
    queryKey: ['knowledge-sources'],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) => expectData(api.GET('/knowledge-sources', { params: { query: { limit: 50, ...(pageParam && { cursor: pageParam }) } } })),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const items = sources.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Knowledge</h1>
      {sources.isPending && <Loading what="sources" />}
      {sources.isError && <ErrorMessage error={sources.error} action="list the sources" />}
      {sources.isSuccess && items.length === 0 && <Empty>No knowledge source yet.</Empty>}
      {items.length > 0 && (
        <DataTable
          rows={items}
          rowKey={(source) => source.source_id}
          columns={[
            { header: 'Name', cell: (source) => <Link to={`/knowledge/${source.source_id}`}>{source.name}</Link> },
            { header: 'Kind', cell: (source) => source.source_kind },
            { header: 'Documents', cell: (source) => source.document_count },
            { header: 'Chunking', cell: (source) => source.chunking_strategy },
            { header: 'Updated', cell: (source) => <When at={source.updated_at} /> },
          ]}
        />
      )}
      <ShowMore list={sources} what="sources" />
      {mayWrite && <NewSource />}
    </>
  );
}
