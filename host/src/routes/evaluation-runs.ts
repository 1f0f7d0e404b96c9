import { z } from 'zod';
import { sendAttachment } from '../http/attachment.js';
import { evaluationRun, gateBody, gateVerdict, offsetPaging, resultsPage, runComparison, runCreateBody, runSlices } from '../schemas/evaluation.js';
import { pageOf, pagingFields } from '../validation.js';
import { route, type RouteFactory } from './route.js';

const runNotFound = { 404: 'No such agent (AGENT_NOT_FOUND), or no such run of it (EVALUATION_RUN_NOT_FOUND)' };

/** Evaluation runs (spec 3.4, 4.9): started on an agent and a frozen snapshot, run in the background, read with scores. */
export const evaluationRunRoutes: RouteFactory<'evaluationRuns'> = (domains, app) => {
  const log = app.logger.child({ component: 'evaluation-results-csv' });
  const agentId = (params: Record<string, string>) => String(params.agent_id);
  const runId = (params: Record<string, string>) => String(params.evaluation_run_id);
  return [
    route({
      method: 'post',
      path: '/agents/:agent_id/evaluation-runs',
      access: { permission: 'evaluation.write' },
      summary: 'Start an evaluation run of the agent on a frozen QA snapshot (queued; runs in the background)',
      body: runCreateBody,
      example: { dataset_id: '7c0e4b52-3c1a-4f7e-9d61-2b8a5f0e9c13' },
      success: { status: 201, description: 'The queued run with its model and judge snapshot', schema: evaluationRun },
      refusals: {
        404: 'No such agent (AGENT_NOT_FOUND)',
        409: 'The dataset is not frozen (EVALUATION_DATASET_NOT_FROZEN), or not a QA snapshot for a chat agent (EVALUATION_DATASET_TASK_TYPE)',
        422: 'No such dataset (dataset_id), or model_name and model_provider not given together',
      },
      handler: async (req, res, { body, operation }) => {
        res.status(201);
        return domains.evaluationRuns.create(agentId(req.params), body, operation);
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/evaluation-runs',
      access: { permission: 'evaluation.read' },
      summary: "The agent's evaluation runs, newest first, with execution_state, heartbeat_stale, scores and usage rollups",
      query: z.object(pagingFields).strict(),
      success: { status: 200, description: 'A page of runs', schema: pageOf(evaluationRun) },
      refusals: { 404: 'No such agent (AGENT_NOT_FOUND)' },
      handler: async (req, _res, { query }) => domains.evaluationRuns.list(agentId(req.params), query),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/evaluation-runs/:evaluation_run_id',
      access: { permission: 'evaluation.read' },
      summary: 'One run: its state, progress, score summary and usage rollups',
      success: { status: 200, description: 'The run', schema: evaluationRun },
      refusals: runNotFound,
      handler: async (req) => domains.evaluationRuns.get(agentId(req.params), runId(req.params)),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/evaluation-runs/:evaluation_run_id/results',
      access: { permission: 'evaluation.read' },
      summary: "The run's scored items in dataset order, by offset and limit, with rule_score, judge_score and usage",
      query: z.object(offsetPaging).strict(),
      success: { status: 200, description: 'A page of results with the total scored so far', schema: resultsPage },
      refusals: runNotFound,
      handler: async (req, _res, { query }) => domains.evaluationRuns.results(agentId(req.params), runId(req.params), query),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/evaluation-runs/:evaluation_run_id/results.csv',
      access: { permission: 'evaluation.read' },
      summary: 'The stored results as a streamed UTF-8 CSV attachment (texts that a spreadsheet would run as formulas are escaped)',
      success: { status: 200, description: 'One row per scored item, in dataset order, with a header row', contentType: 'text/csv' },
      refusals: runNotFound,
      handler: async (req, res) => {
        const csv = await domains.evaluationRuns.resultsCsv(agentId(req.params), runId(req.params));
        return sendAttachment(res, { ...csv, contentType: 'text/csv; charset=utf-8' }, log, { run_id: runId(req.params) });
      },
    }),
    route({
      method: 'post',
      path: '/agents/:agent_id/evaluation-runs/:evaluation_run_id/evaluate-gate',
      access: { permission: 'evaluation.write' },
      summary: 'Judge a completed run by the gate policy ([evaluation.gate] defaults, overridden field by field) and keep the verdict',
      body: gateBody,
      example: { score_pass_rate_min: 0.9 },
      success: { status: 201, description: 'The stored verdict: passed, the policy used, the metrics, and a reason per failed condition', schema: gateVerdict },
      refusals: { ...runNotFound, 409: 'The run has not completed (EVALUATION_RUN_NOT_FINISHED)' },
      handler: async (req, res, { body, operation }) => {
        const verdict = await domains.evaluationRuns.evaluateGate(agentId(req.params), runId(req.params), body, operation);
        res.status(201);
        return verdict;
      },
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/evaluation-runs/:evaluation_run_id/slices',
      access: { permission: 'evaluation.read' },
      summary: "The run's scores aggregated by domain, difficulty and source",
      success: { status: 200, description: 'The slices', schema: runSlices },
      refusals: runNotFound,
      handler: async (req) => domains.evaluationRuns.slices(agentId(req.params), runId(req.params)),
    }),
    route({
      method: 'get',
      path: '/agents/:agent_id/evaluation-runs/:evaluation_run_id/compare',
      access: { permission: 'evaluation.read' },
      summary: 'Compare the run with a baseline run of the same snapshot, item by item: score deltas, improved and regressed items',
      query: z.object({ baseline_run_id: z.string().uuid() }).strict(),
      success: { status: 200, description: 'The comparison', schema: runComparison },
      refusals: {
        ...runNotFound,
        409: 'Either run has not completed (EVALUATION_RUN_NOT_FINISHED), or they used different snapshots (EVALUATION_RUNS_NOT_COMPARABLE)',
        422: 'No such baseline run',
      },
      handler: async (req, _res, { query }) => domains.evaluationRuns.compare(agentId(req.params), runId(req.params), query.baseline_run_id),
    }),
    route({
      method: 'get',
      path: '/evaluation-datasets/:dataset_id/runs',
      access: { permission: 'evaluation.read' },
      summary: 'Evaluation runs on this dataset, newest first',
      query: z.object(pagingFields).strict(),
      success: { status: 200, description: 'A page of runs', schema: pageOf(evaluationRun) },
      refusals: { 404: 'No such evaluation dataset (EVALUATION_DATASET_NOT_FOUND)' },
      handler: async (req, _res, { query }) => domains.evaluationRuns.ofDataset(String(req.params.dataset_id), query),
    }),
  ];
};
