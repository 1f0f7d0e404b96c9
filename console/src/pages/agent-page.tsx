import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useParams } from 'react-router';
import { api, expectData } from '../api';
import { AgentForm } from '../components/agent-form';
import { AgentMounts } from '../components/agent-mounts';
import { AgentSkillMounts } from '../components/agent-skill-mounts';
import { AgentToolMounts } from '../components/agent-tool-mounts';
import { EtlJobs } from '../components/etl-jobs';
import { FusionRuns } from '../components/fusion-runs';
import { PublicApiKeys } from '../components/public-api-keys';
import { AgentEvaluationRuns } from '../components/evaluation-runs';
import { AgentVersions } from '../components/agent-versions';
import { ErrorMessage, Loading } from '../components/states';
import { useCan } from '../session';

/** One agent: every field group to edit, its versions; a chat agent's knowledge and tool mounts, an ETL agent's jobs. */
export function AgentPage() {
  const agentId = useParams().agentId!;
  const mayWrite = useCan('agents.write');
  const mayReadKnowledge = useCan('knowledge.read');
  const mayMount = useCan('knowledge.write');
  const mayReadTools = useCan('mcp.read');
  const mayMountTools = useCan('mcp.write');
  const mayReadJobs = useCan('jobs.read');
  const mayRunJobs = useCan('jobs.write');
  const mayReadEvaluation = useCan('evaluation.read');
  const mayReadSkills = useCan('skills.read');
  // A rollback replaces the configuration under the form: a new form then starts from it.
  const [restored, setRestored] = useState(0);
  const agent = useQuery({
    queryKey: ['agent', agentId],
    queryFn: () => expectData(api.GET('/agents/{agent_id}', { params: { path: { agent_id: agentId } } })),
  });
  if (agent.isPending) return <Loading what="the agent" />;
  if (agent.isError) return <ErrorMessage error={agent.error} action="read the agent" />;
  return (
    <>
      <h1>{agent.data.name}</h1>
      <div className="agent-layout">
        <AgentForm key={restored} agent={agent.data} readOnly={!mayWrite} />
        <div>
          <AgentVersions agent={agent.data} mayWrite={mayWrite} onRestored={() => setRestored((n) => n + 1)} />
          {mayReadKnowledge && agent.data.agent_type === 'chat' && <AgentMounts agentId={agentId} mayWrite={mayMount} />}
          {mayReadTools && agent.data.agent_type === 'chat' && <AgentToolMounts agentId={agentId} mayWrite={mayMountTools} />}
          {mayReadSkills && agent.data.agent_type === 'chat' && <AgentSkillMounts agentId={agentId} />}
          {mayReadJobs && agent.data.agent_type === 'etl' && <EtlJobs agentId={agentId} mayWrite={mayRunJobs} />}
          {mayReadJobs && agent.data.agent_type === 'fusion' && <FusionRuns agent={agent.data} mayRun={mayRunJobs} />}
          {agent.data.agent_type === 'fusion' && <PublicApiKeys agentId={agentId} mayWrite={mayWrite} />}
          {mayReadEvaluation && agent.data.agent_type !== 'etl' && <AgentEvaluationRuns agentId={agentId} />}
        </div>
      </div>
    </>
  );
}
