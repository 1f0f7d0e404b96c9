import { createContext, useContext } from 'react';
import type { components } from '@agent-host/client';

export type Session = components['schemas']['AdminSession'];

export const SessionContext = createContext<Session | undefined>(undefined);

/** The logged-in administrator; the pages under the layout render only with one. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a logged-in page');
  return session;
}

/** Whether the administrator holds `permission`: what they may not do is hidden, not shown and refused. */
export function useCan(permission: string): boolean {
  return useSession().permissions.includes(permission);
}
