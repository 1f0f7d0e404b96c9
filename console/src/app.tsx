import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { NavLink, Outlet, Route, Routes } from 'react-router';
import { api, onSessionLost } from './api';
import { Loading } from './components/states';
import { ChallengeProvider } from './challenge';
import { AdminUserPage } from './pages/admin-user-page';
import { AdminUsersPage } from './pages/admin-users-page';
import { AgentCreatePage } from './pages/agent-create-page';
import { AgentPage } from './pages/agent-page';
import { AuditLogPage } from './pages/audit-log-page';
import { AgentsPage } from './pages/agents-page';
import { DashboardPage } from './pages/dashboard-page';
import { DocumentRunPage } from './pages/document-run-page';
import { DocumentsPage } from './pages/documents-page';
import { EvaluationDatasetPage } from './pages/evaluation-dataset-page';
import { EvaluationPage } from './pages/evaluation-page';
import { EvaluationRunPage } from './pages/evaluation-run-page';
import { KnowledgePage } from './pages/knowledge-page';
import { KnowledgeSourcePage } from './pages/knowledge-source-page';
import { LoginPage, SessionEndedDialog } from './pages/login-page';
import { ToolServerPage } from './pages/tool-server-page';
import { ToolsPage } from './pages/tools-page';
import { PlaygroundPage } from './pages/playground-page';
import { ScheduledTasksPage } from './pages/scheduled-tasks-page';
import { SessionPage } from './pages/session-page';
import { SessionsPage } from './pages/sessions-page';
import { SkillPage } from './pages/skill-page';
import { SkillsPage } from './pages/skills-page';
import { SystemSettingsPage } from './pages/system-settings-page';
import { SessionContext, useCan, useSession, type Session } from './session';

/** The frame of every logged-in page: navigation by permission, who is logged in, and logging out. */
function Layout({ onLoggedOut }: { onLoggedOut: () => void }) {
  const session = useSession();
  const mayReadAgents = useCan('agents.read');
  const mayReadConversations = useCan('conversations.read');
  const mayReadKnowledge = useCan('knowledge.read');
  const mayReadTools = useCan('mcp.read');
  const mayReadSkills = useCan('skills.read');
  const mayReadTasks = useCan('scheduled_tasks.read');
  const mayReadEvaluation = useCan('evaluation.read');
  const mayReadJobs = useCan('jobs.read');
  const mayReadAdmins = useCan('admin_users.read');
  const mayReadAudit = useCan('audit_logs.read');
  const mayReadSettings = useCan('system_settings.read');
  async function logOut() {
    await api.POST('/admin/auth/logout');
    onLoggedOut();
  }
  return (
    <>
      <header className="top">
        <span className="brand">agent-host</span>
        <nav aria-label="Main">
          <NavLink to="/" end>
            Dashboard
          </NavLink>
          {mayReadAgents && <NavLink to="/agents">Agents</NavLink>}
          {mayReadAgents && <NavLink to="/playground">Playground</NavLink>}
          {mayReadConversations && <NavLink to="/sessions">Sessions</NavLink>}
          {mayReadKnowledge && <NavLink to="/knowledge">Knowledge</NavLink>}
          {mayReadTools && <NavLink to="/tools">Tools</NavLink>}
          {mayReadSkills && <NavLink to="/skills">Skills</NavLink>}
          {mayReadJobs && <NavLink to="/documents">Documents</NavLink>}
          {mayReadEvaluation && <NavLink to="/evaluation">Evaluation</NavLink>}
          {mayReadTasks && <NavLink to="/scheduled-tasks">Scheduled</NavLink>}
          {mayReadAdmins && <NavLink to="/admin-users">Administrators</NavLink>}
          {mayReadAudit && <NavLink to="/audit-log">Audit log</NavLink>}
          {mayReadSettings && <NavLink to="/system-settings">Settings</NavLink>}
        </nav>
        <span className="who">{session.display_name || session.username}</span>
        <button type="button" onClick={() => void logOut()}>
          Log out
        </button>
      </header>
      <main>
        <Outlet />
      </main>
    </>
  );
}

function NotFound() {
  return (
    <>
      <h1>Not found</h1>
      <p>This console has no page at this address.</p>
    </>
  );
}

/**
 * Asks the host who is logged in, then shows the login page or the console. A session that cannot be renewed puts a
 * login dialog over the page in place, so the page and what was typed on it are still there after logging in again.
 */
export function App() {
  const [session, setSession] = useState<Session | null>();
  const [ended, setEnded] = useState(false);
  const queries = useQueryClient();

  useEffect(() => {
    onSessionLost(() => setEnded(true));
    api.GET('/admin/auth/me').then(
      ({ data }) => setSession(data ?? null),
      () => setSession(null),
    );
  }, []);

  const loggedIn = (next: Session) => {
    setSession(next);
    setEnded(false);
    void queries.invalidateQueries();
  };
  if (session === undefined) return <Loading what="your session" />;
  if (session === null) return <LoginPage onLoggedIn={loggedIn} />;
  const loggedOut = () => {
    queries.clear();
    setSession(null);
  };
  return (
    <SessionContext value={session}>
      <ChallengeProvider>
        <Routes>
          <Route element={<Layout onLoggedOut={loggedOut} />}>
            <Route index element={<DashboardPage />} />
            <Route path="agents" element={<AgentsPage />} />
            <Route path="agents/new" element={<AgentCreatePage />} />
            <Route path="agents/:agentId" element={<AgentPage />} />
            <Route path="agents/:agentId/evaluation-runs/:runId" element={<EvaluationRunPage />} />
            <Route path="playground" element={<PlaygroundPage />} />
            <Route path="sessions" element={<SessionsPage />} />
            <Route path="sessions/:sessionId" element={<SessionPage />} />
            <Route path="knowledge" element={<KnowledgePage />} />
            <Route path="knowledge/:sourceId" element={<KnowledgeSourcePage />} />
            <Route path="tools" element={<ToolsPage />} />
            <Route path="tools/:serverId" element={<ToolServerPage />} />
            <Route path="skills" element={<SkillsPage />} />
            <Route path="skills/:skillId" element={<SkillPage />} />
            <Route path="scheduled-tasks" element={<ScheduledTasksPage />} />
            <Route path="documents" element={<DocumentsPage />} />
            <Route path="documents/:runId" element={<DocumentRunPage />} />
            <Route path="evaluation" element={<EvaluationPage />} />
            <Route path="evaluation/:datasetId" element={<EvaluationDatasetPage />} />
            <Route path="admin-users" element={<AdminUsersPage />} />
            <Route path="admin-users/:adminUserId" element={<AdminUserPage />} />
            <Route path="audit-log" element={<AuditLogPage />} />
            <Route path="system-settings" element={<SystemSettingsPage />} />
            <Route path="*" element={<NotFound />} />
          </Route>
        </Routes>
      </ChallengeProvider>
      {ended && <SessionEndedDialog onLoggedIn={loggedIn} />}
    </SessionContext>
  );
}
