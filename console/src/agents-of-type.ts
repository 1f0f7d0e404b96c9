import { useQuery } from '@tanstack/react-query';
import { api, expectData, type Agent } from './api';

/** The agents of one type, up to 100 (the host's page size), for a picker. */
export function useAgentsOfType(type: Agent['agent_type']) {
  return useQuery({
    queryKey: ['agents', type],
    queryFn: async () => (await expectData(api.GET('/agents', { params: { query: { limit: 100 } } }))).items.filter((a) => a.agent_type === type),
  });
}
