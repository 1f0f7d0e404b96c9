import { useInfiniteQuery, useMutation } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import type { components } from '@agent-host/client';
import { api, expectData, type ApiError } from '../api';
import { DataTable, When } from '../components/data-table';
import { ShowMore } from '../components/show-more';
import { Empty, ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

type Skill = components['schemas']['Skill'];

/** A new skill: its name is the tool name runtimes show the model. */
function NewSkill() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const navigate = useNavigate();
  const create = useMutation<Skill, ApiError>({
    mutationFn: () => expectData(api.POST('/skills', { body: { name, ...(description && { description }) } })),
    onSuccess: (skill) => navigate(`/skills/${skill.skill_id}`),
  });
  const submit = (event: FormEvent) => {
    event.preventDefault();
    create.mutate();
  };
  return (
    <form className="form" onSubmit={submit} aria-label="New skill">
      <h2>New skill</h2>
      <label htmlFor="skill-name">Name (letters, digits, _ and -; the model sees it as a tool name)</label>
      <input id="skill-name" value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="skill-description">Description</label>
      <textarea id="skill-description" value={description} onChange={(e) => setDescription(e.target.value)} />
      {create.error && <ErrorMessage error={create.error} action="create the skill" />}
      <button type="submit" disabled={create.isPending}>
        Create skill
      </button>
    </form>
  );
}

/** Skills, newest first, by status; each opens its versions. */
export function SkillsPage() {
  const mayWrite = useCan('skills.write');
  const [params, setParams] = useSearchParams();
  const status = (params.get('status') ?? '') as Skill['status'] | '';
  const skills = useInfiniteQuery({
    queryKey: ['skills', status],
    initialPageParam: undefined as string | undefined,
    queryFn: ({ pageParam }) =>
      expectData(api.GET('/skills', { params: { query: { limit: 50, ...(status && { status }), ...(pageParam && { cursor: pageParam }) } } })),
    getNextPageParam: (last) => last.next_cursor ?? undefined,
  });
  const items = skills.data?.pages.flatMap((page) => page.items) ?? [];
  return (
    <>
      <h1>Skills</h1>
      <div className="toolbar">
        <label htmlFor="skills-status">Status</label>
        <select id="skills-status" value={status} onChange={(e) => setParams(e.target.value ? { status: e.target.value } : {})}>
          <option value="">Any</option>
          <option>active</option>
          <option>disabled</option>
        </select>
      </div>
      {skills.isPending && <Loading what="skills" />}
      {skills.isError && <ErrorMessage error={skills.error} action="list the skills" />}
      {skills.isSuccess && items.length === 0 && <Empty>No skill{status ? ' matches' : ' yet'}.</Empty>}
      {items.length > 0 && (
        <DataTable
          rows={items}
          rowKey={(skill) => skill.skill_id}
          columns={[
            { header: 'Name', cell: (skill) => <Link to={`/skills/${skill.skill_id}`}>{skill.name}</Link> },
            { header: 'Description', cell: (skill) => skill.description },
            { header: 'Status', cell: (skill) => skill.status },
            { header: 'Versions', cell: (skill) => `${skill.version_count}${skill.latest_released_version_id ? '' : ', none released'}` },
            { header: 'Updated', cell: (skill) => <When at={skill.updated_at} /> },
          ]}
        />
      )}
      <ShowMore list={skills} what="skills" />
      {mayWrite && <NewSkill />}
    </>
  );
}
