import { useQuery } from '@tanstack/react-query';
import { api, expectData } from '../api';
import { UsageSection } from '../components/agent-usage';
import { ErrorMessage, Loading } from '../components/states';
import { useCan, useSession } from '../session';

/** Facts as a definition list, null ones shown as a dash. */
function Facts({ facts }: { facts: Record<string, unknown> }) {
  return (
    <dl className="facts">
      {Object.entries(facts).map(([name, value]) => (
        <div key={name}>
          <dt>{name.replaceAll('_', ' ')}</dt>
          <dd>{value === null || value === '' ? '—' : Array.isArray(value) ? value.join('; ') || '—' : String(value)}</dd>
        </div>
      ))}
    </dl>
  );
}

/** The host's health and guard state, the release it runs, an agent's usage and cost, and who is logged in. */
export function DashboardPage() {
  const session = useSession();
  const mayReadRelease = useCan('dashboard.read');
  const health = useQuery({ queryKey: ['healthz'], queryFn: () => expectData(api.GET('/healthz')) });
  const release = useQuery({ queryKey: ['release-metadata'], queryFn: () => expectData(api.GET('/release-metadata')), enabled: mayReadRelease });
  const mayReadAgents = useCan('agents.read');
  const agents = useQuery({
    queryKey: ['agents', 'first-page'],
    queryFn: () => expectData(api.GET('/agents', { params: { query: { limit: 100 } } })),
    enabled: mayReadAgents,
  });

  return (
    <>
      <h1>Dashboard</h1>
      <section aria-labelledby="health-heading">
        <h2 id="health-heading">Health</h2>
        {health.isPending && <Loading what="the host's health" />}
        {health.isError && <ErrorMessage error={health.error} action="read the host's health" />}
        {health.data && (
          <>
            <p className={`badge guard-${health.data.guard_state}`}>Guard {health.data.guard_state}</p>
            <Facts facts={health.data} />
          </>
        )}
      </section>
      {mayReadRelease && (
        <section aria-labelledby="release-heading">
          <h2 id="release-heading">Release</h2>
          {release.isPending && <Loading what="the release metadata" />}
          {release.isError && <ErrorMessage error={release.error} action="read the release metadata" />}
          {release.data && <Facts facts={release.data} />}
        </section>
      )}
      {mayReadAgents && agents.isPending && <Loading what="agents" />}
      {mayReadAgents && agents.isError && <ErrorMessage error={agents.error} action="list the agents" />}
      {agents.data && <UsageSection agents={agents.data.items} />}
      <section aria-labelledby="session-heading">
        <h2 id="session-heading">You</h2>
        <Facts facts={{ username: session.username, display_name: session.display_name, role: session.role_code, permissions: session.permissions }} />
      </section>
    </>
  );
}
