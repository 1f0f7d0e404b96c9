import { QueryTypes, type Transaction } from 'sequelize';
import { newestFirst } from '../db/keyset-cursor.js';
import { renewLease, type LeasedRow } from '../db/leased-row.js';
import { SqlStore } from '../db/sql-store.js';
import type { TokenUsageSummary } from '../usage/token-usage.js';
import type { Schedule, ScheduleKind } from './schedule.js';

/** `origin_session`: the reply is posted into the session the task was made in; `new_session`: each run starts one. */
export type TargetMode = 'origin_session' | 'new_session';
/** What a due time does while the task's previous run has not ended: `skip` it, or `defer` it until that run ends. */
export type ConflictPolicy = 'skip' | 'defer';
/** `active` until cancelled, or `completed` once a schedule has no more due times (a `once` task after its run). */
export type TaskStatus = 'active' | 'completed' | 'cancelled';
/** A run's stored status; `heartbeat_expired` is derived from a `running` run whose lease lapsed (spec 3.6). */
export type RunStatus = 'queued' | 'recovering' | 'running' | 'succeeded' | 'failed' | 'deferred' | 'cancelled';

export interface TaskRow {
  id: string;
  agent_id: string;
  session_id: string | null;
  schedule_kind: ScheduleKind;
  schedule_payload: Schedule;
  payload: { message: string };
  target_mode: TargetMode;
  conflict_policy: ConflictPolicy;
  status: TaskStatus;
  next_run_at: Date | null;
  created_via: 'api' | 'chat';
  created_by: string | null;
  caller_key: string | null;
  created_at: Date;
  updated_at: Date;
  cancelled_at: Date | null;
}

export interface RunRow extends LeasedRow {
  id: string;
  task_id: string;
  due_at: Date;
  status: RunStatus;
  reason: string | null;
  session_id: string | null;
  turn_id: string | null;
}

/** A run just claimed, with what its turn needs of its task. */
export type ClaimedRun = RunRow & { task: Pick<TaskRow, 'status' | 'agent_id' | 'target_mode' | 'payload' | 'caller_key'> };

/** A run with its turn's usage columns, for `derived_generation_usage`. */
export type RunWithUsage = RunRow & {
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  token_usage_source: TokenUsageSummary['token_usage_source'] | null;
  /** Running, and its lease lapsed: the worker stopped (`heartbeat_expired`). */
  lease_lapsed: boolean;
  /** Running, and no heartbeat for longer than the stale threshold. */
  heartbeat_stale: boolean;
};

export interface TaskFilters {
  agent_id?: string;
  session_id?: string;
  status?: TaskStatus;
  target_mode?: TargetMode;
  schedule_kind?: ScheduleKind;
}

export type NewTask = Omit<TaskRow, 'status' | 'created_at' | 'updated_at' | 'cancelled_at'>;

/** Runs that hold their task's place: started, or about to start. */
const STARTED_OR_STARTING = `('queued', 'running', 'recovering')`;

/** Queues deferred runs `r` of active tasks `t` whose session is not under human takeover; callers add which tasks and what may hold them back. */
const RELEASE_DEFERRED = `UPDATE scheduled_task_runs r SET status = 'queued', reason = NULL
  FROM scheduled_tasks t
  WHERE r.status = 'deferred' AND t.id = r.task_id AND t.status <> 'cancelled'
    AND NOT EXISTS (SELECT 1 FROM chat_sessions s WHERE s.id = COALESCE(r.session_id, t.session_id) AND t.target_mode = 'origin_session' AND s.status = 'HUMAN_ACTIVE')`;

/** The SQL of scheduled tasks and their runs. */
export class ScheduledTaskStore extends SqlStore {
  async insert(task: NewTask, transaction?: Transaction): Promise<TaskRow> {
    const [row] = await this.db.query<TaskRow>(
      `INSERT INTO scheduled_tasks (id, agent_id, session_id, schedule_kind, schedule_payload, payload, target_mode, conflict_policy, status, next_run_at,
         created_via, created_by, caller_key, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'active', $9, $10, $11, $12, now(), now()) RETURNING *`,
      {
        bind: [
          task.id,
          task.agent_id,
          task.session_id,
          task.schedule_kind,
          JSON.stringify(task.schedule_payload),
          JSON.stringify(task.payload),
          task.target_mode,
          task.conflict_policy,
          task.next_run_at,
          task.created_via,
          task.created_by,
          task.caller_key,
        ],
        type: QueryTypes.SELECT,
        transaction,
      },
    );
    return row!;
  }

  /** Locks the agent's row for the transaction: two tasks made at once for it cannot both take the last place. */
  async lockAgent(agentId: string, transaction: Transaction): Promise<void> {
    await this.db.query('SELECT id FROM agents WHERE id = $1 FOR UPDATE', { bind: [agentId], transaction });
  }

  /** Active tasks of the agent, and of the session among them. */
  async countActive(agentId: string, sessionId: string | null, transaction?: Transaction): Promise<{ agent: number; session: number }> {
    const [row] = await this.db.query<{ agent: string; session: string }>(
      `SELECT count(*) AS agent, count(*) FILTER (WHERE session_id = $2) AS session FROM scheduled_tasks WHERE agent_id = $1 AND status = 'active'`,
      { bind: [agentId, sessionId], type: QueryTypes.SELECT, transaction },
    );
    return { agent: Number(row!.agent), session: Number(row!.session) };
  }

  async find(taskId: string): Promise<TaskRow | undefined> {
    const [row] = await this.db.query<TaskRow>('SELECT * FROM scheduled_tasks WHERE id = try_uuid($1)', { bind: [taskId], type: QueryTypes.SELECT });
    return row;
  }

  page<T>(filters: TaskFilters, page: { limit: number; cursor?: string }, present: (row: TaskRow) => T) {
    const clauses: string[] = [];
    const bind: unknown[] = [];
    for (const [column, value] of Object.entries(filters) as [keyof TaskFilters, string | undefined][]) {
      if (value === undefined) continue;
      bind.push(value);
      clauses.push(`r.${column} = $${bind.length}`);
    }
    return newestFirst(this.db, { from: 'scheduled_tasks', where: clauses.join(' AND ') || 'true', bind }, page, present);
  }

  /** The session's active tasks, next due first. */
  activeInSession(sessionId: string): Promise<TaskRow[]> {
    return this.db.query<TaskRow>(`SELECT * FROM scheduled_tasks WHERE session_id = $1 AND status = 'active' ORDER BY next_run_at, id`, {
      bind: [sessionId],
      type: QueryTypes.SELECT,
    });
  }

  /** Cancels an active task and its runs that have not started; a running run finishes. Undefined when not active. */
  async cancel(taskId: string): Promise<TaskRow | undefined> {
    return this.transaction(async (transaction) => {
      const [row] = await this.db.query<TaskRow>(
        `UPDATE scheduled_tasks SET status = 'cancelled', next_run_at = NULL, cancelled_at = now(), updated_at = now()
         WHERE id = $1 AND status = 'active' RETURNING *`,
        { bind: [taskId], type: QueryTypes.SELECT, transaction },
      );
      if (!row) return undefined;
      await this.db.query(
        `UPDATE scheduled_task_runs SET status = 'cancelled', reason = 'the task was cancelled before this run started', completed_at = now()
         WHERE task_id = $1 AND status IN ('queued', 'recovering', 'deferred')`,
        { bind: [taskId], transaction },
      );
      return row;
    });
  }

  /** Whether an active task's due time passed at least `lagSeconds` ago: a due time nobody fired. */
  async hasOverdue(lagSeconds: number): Promise<boolean> {
    const [row] = await this.db.query<{ overdue: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM scheduled_tasks WHERE status = 'active' AND next_run_at <= now() - make_interval(secs => $1)) AS overdue`,
      { bind: [lagSeconds], type: QueryTypes.SELECT },
    );
    return row!.overdue;
  }

  /**
   * Fires the due times of active tasks due by `horizon`, earliest first, `limit` tasks at most, passing over tasks
   * another instance is firing (their rows are locked): records each due time's run and moves the task's
   * `next_run_at` to `next(task)` (`completed` when null). A run nothing holds back is recorded `running` under
   * `claim.owner`'s lease, claimed by this statement to start here at once (in `claim.newSessionId()` for a
   * `new_session` task); while an earlier run of its task has not ended it is `deferred` or skipped (`cancelled`) by
   * the task's conflict policy, and not recorded at all when a deferred run already waits (it covers this due time
   * too). `(task_id, due_at)` is unique: a due time is fired once. Resolves with the tasks fired (as they are now)
   * and the runs to start.
   */
  async fireDue(
    horizon: Date,
    limit: number,
    claim: { owner: string; leaseSeconds: number; newSessionId: () => string },
    next: (task: TaskRow) => Date | null,
  ): Promise<{ tasks: TaskRow[]; started: ClaimedRun[] }> {
    return this.transaction(async (transaction) => {
      const due = await this.db.query<TaskRow & { open_runs: { status: RunStatus; due_at: string }[] }>(
        `SELECT t.*, COALESCE((SELECT json_agg(json_build_object('status', r.status, 'due_at', r.due_at) ORDER BY r.due_at) FROM scheduled_task_runs r
                               WHERE r.task_id = t.id AND r.status IN ('queued', 'running', 'recovering', 'deferred')), '[]') AS open_runs
         FROM scheduled_tasks t WHERE t.status = 'active' AND t.next_run_at <= $1 ORDER BY t.next_run_at LIMIT $2 FOR UPDATE OF t SKIP LOCKED`,
        { bind: [horizon, limit], type: QueryTypes.SELECT, transaction },
      );
      if (!due.length) return { tasks: [], started: [] };
      const runs = due.flatMap(({ open_runs: open, ...task }): { task: TaskRow; status: RunStatus; reason: string | null; sessionId: string | null }[] => {
        const blocking = open.find((r) => r.status !== 'deferred');
        if (!blocking) {
          const sessionId = task.target_mode === 'origin_session' ? task.session_id : claim.newSessionId();
          return [{ task, status: 'running', reason: null, sessionId }];
        }
        if (open.some((r) => r.status === 'deferred')) return [];
        const [status, reason]: [RunStatus, string] =
          task.conflict_policy === 'defer'
            ? ['deferred', `waits for the run due at ${new Date(blocking.due_at).toISOString()} to end (conflict_policy=defer)`]
            : ['cancelled', `skipped: the run due at ${new Date(blocking.due_at).toISOString()} had not ended (conflict_policy=skip)`];
        return [{ task, status, reason, sessionId: null }];
      });
      const nextRunAt = due.map((task) => next(task));
      // The tasks' next due times and the runs in one statement; the update is a CTE Postgres runs though nothing reads it.
      const inserted = await this.db.query<RunRow>(
        `WITH moved AS (
           UPDATE scheduled_tasks t SET next_run_at = x.next, status = CASE WHEN x.next IS NULL THEN 'completed' ELSE t.status END, updated_at = now()
           FROM unnest($1::uuid[], $2::timestamptz[]) AS x(id, next) WHERE t.id = x.id)
         INSERT INTO scheduled_task_runs (id, task_id, due_at, status, reason, session_id, created_at, completed_at,
           attempt_count, started_at, lease_owner, lease_expires_at, worker_heartbeat_at)
         SELECT gen_random_uuid(), x.task_id, x.due_at, x.status, x.reason, x.session_id, now(), CASE WHEN x.status = 'cancelled' THEN now() END,
           CASE WHEN x.status = 'running' THEN 1 ELSE 0 END, CASE WHEN x.status = 'running' THEN now() END,
           CASE WHEN x.status = 'running' THEN $8 END, CASE WHEN x.status = 'running' THEN now() + make_interval(secs => $9) END,
           CASE WHEN x.status = 'running' THEN now() END
         FROM unnest($3::uuid[], $4::timestamptz[], $5::varchar[], $6::text[], $7::varchar[]) AS x(task_id, due_at, status, reason, session_id)
         ON CONFLICT (task_id, due_at) DO NOTHING RETURNING *`,
        {
          bind: [
            due.map((task) => task.id),
            nextRunAt,
            runs.map((r) => r.task.id),
            runs.map((r) => r.task.next_run_at),
            runs.map((r) => r.status),
            runs.map((r) => r.reason),
            runs.map((r) => r.sessionId),
            claim.owner,
            claim.leaseSeconds,
          ],
          type: QueryTypes.SELECT,
          transaction,
        },
      );
      const tasks = new Map(runs.map(({ task }) => [task.id, task] as const));
      const started = inserted
        .filter((run) => run.status === 'running')
        .map((run) => {
          const { status, agent_id, target_mode, payload, caller_key } = tasks.get(run.task_id)!;
          return { ...run, task: { status, agent_id, target_mode, payload, caller_key } };
        });
      const fired = due.map(({ open_runs: _open, ...task }, i) => ({
        ...task,
        next_run_at: nextRunAt[i]!,
        status: nextRunAt[i] ? task.status : ('completed' as const),
      }));
      return { tasks: fired, started };
    });
  }

  /**
   * Takes the run's lease for `owner` if it waits (queued or recovering) or its holder's lease lapsed, with what its
   * turn needs of the task. The run keeps the session it had (a recovered run continues it); a first claim records
   * the task's session (`origin_session`) or `newSessionId`, unless the task was cancelled.
   */
  async claim(runId: string, owner: string, leaseSeconds: number, newSessionId: string): Promise<ClaimedRun | undefined> {
    const [row] = await this.db.query<ClaimedRun>(
      `UPDATE scheduled_task_runs r SET status = 'running', lease_owner = $2, lease_expires_at = now() + make_interval(secs => $3), worker_heartbeat_at = now(),
         attempt_count = r.attempt_count + 1, started_at = COALESCE(r.started_at, now()),
         session_id = CASE WHEN t.status = 'cancelled' THEN r.session_id
                           ELSE COALESCE(r.session_id, CASE WHEN t.target_mode = 'origin_session' THEN t.session_id ELSE $4 END) END
       FROM scheduled_tasks t
       WHERE r.id = $1 AND t.id = r.task_id AND (r.status IN ('queued', 'recovering') OR (r.status = 'running' AND r.lease_expires_at < now()))
       RETURNING r.*, json_build_object('status', t.status, 'agent_id', t.agent_id, 'target_mode', t.target_mode, 'payload', t.payload, 'caller_key', t.caller_key) AS task`,
      { bind: [runId, owner, leaseSeconds, newSessionId], type: QueryTypes.SELECT },
    );
    return row;
  }

  /** Renews the lease; false when `owner` no longer holds the run. */
  renew(runId: string, owner: string, leaseSeconds: number): Promise<boolean> {
    return renewLease(this.db, 'scheduled_task_runs', runId, owner, leaseSeconds);
  }

  /**
   * Ends the run `owner` holds (an end state with its turn, or back to `deferred` with why) and, in the same
   * statement, queues the task's deferred runs that nothing holds back any more; resolves with those, to start. A run
   * this ends is no longer counted as holding its task's place; one `owner` no longer holds still is. A run this puts
   * back to `deferred` is released by the supervisor's sweep.
   */
  async finish(
    run: { id: string; task_id: string },
    owner: string,
    end: { status: RunStatus; reason: string | null; turnId?: string | null },
  ): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `WITH ended AS (
         UPDATE scheduled_task_runs SET status = $3::varchar, reason = $4, turn_id = COALESCE($5, turn_id), lease_owner = NULL, lease_expires_at = NULL,
           completed_at = CASE WHEN $3::varchar = 'deferred' THEN NULL ELSE now() END
         WHERE id = $1 AND lease_owner = $2 RETURNING id)
       ${RELEASE_DEFERRED} AND r.task_id = $6
         AND NOT EXISTS (SELECT 1 FROM scheduled_task_runs o WHERE o.task_id = r.task_id AND o.status IN ${STARTED_OR_STARTING}
                         AND NOT (o.id = $1 AND EXISTS (SELECT 1 FROM ended)))
       RETURNING r.id`,
      { bind: [run.id, owner, end.status, end.reason, end.turnId ?? null, run.task_id], type: QueryTypes.SELECT },
    );
    return rows.map((r) => r.id);
  }

  /** Running runs whose lease lapsed: `failed` after `maxAttempts` claims, else `recovering`; resolves with those to start again. */
  async expireLeases(maxAttempts: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string; status: RunStatus }>(
      `UPDATE scheduled_task_runs SET status = CASE WHEN attempt_count >= $1 THEN 'failed' ELSE 'recovering' END, lease_owner = NULL,
         reason = CASE WHEN attempt_count >= $1 THEN 'the run was interrupted ' || attempt_count || ' times; giving up' ELSE 'recovered after its worker stopped' END,
         completed_at = CASE WHEN attempt_count >= $1 THEN now() END
       WHERE status = 'running' AND lease_expires_at < now() RETURNING id, status`,
      { bind: [maxAttempts], type: QueryTypes.SELECT },
    );
    return rows.filter((r) => r.status === 'recovering').map((r) => r.id);
  }

  /**
   * Deferred runs whose blocker ended (no earlier run of the task still open, and the session not under human
   * takeover) become `queued`; resolves with them, to start. `taskId` limits it to one task.
   */
  async releaseDeferred(taskId?: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `${RELEASE_DEFERRED} AND ($1::uuid IS NULL OR r.task_id = $1)
         AND NOT EXISTS (SELECT 1 FROM scheduled_task_runs o WHERE o.task_id = r.task_id AND o.status IN ${STARTED_OR_STARTING})
       RETURNING r.id`,
      { bind: [taskId ?? null], type: QueryTypes.SELECT },
    );
    return rows.map((r) => r.id);
  }

  /** The agent of the session (null for a session without one), or undefined when there is no such session. */
  async sessionAgent(sessionId: string): Promise<string | null | undefined> {
    const [row] = await this.db.query<{ agent_id: string | null }>('SELECT agent_id FROM chat_sessions WHERE id = $1', {
      bind: [sessionId],
      type: QueryTypes.SELECT,
    });
    return row ? row.agent_id : undefined;
  }

  /** Whether the session is under human takeover. */
  async takenOver(sessionId: string): Promise<boolean> {
    const rows = await this.db.query(`SELECT 1 FROM chat_sessions WHERE id = $1 AND status = 'HUMAN_ACTIVE'`, { bind: [sessionId], type: QueryTypes.SELECT });
    return rows.length > 0;
  }

  /**
   * The task's runs, newest first, each with its turn's usage, whether its lease lapsed, and whether its heartbeat
   * is older than `staleSeconds`.
   */
  runsPage<T>(taskId: string, staleSeconds: number, page: { limit: number; cursor?: string }, present: (row: RunWithUsage) => T) {
    return newestFirst<RunWithUsage, T>(
      this.db,
      {
        from: `(SELECT r.*, t.input_tokens, t.output_tokens, t.total_tokens, t.token_usage_source,
                  (r.status = 'running' AND r.lease_expires_at < now()) AS lease_lapsed,
                  (r.status = 'running' AND r.worker_heartbeat_at < now() - make_interval(secs => $2)) AS heartbeat_stale
                FROM scheduled_task_runs r LEFT JOIN conversation_turns t ON t.id = r.turn_id)`,
        where: 'r.task_id = $1',
        bind: [taskId, staleSeconds],
      },
      page,
      present,
    );
  }
}
