import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { EtlPlan, EtlRuntime, Logger, ModelProvider } from '@agent-host/sdk';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import { parse } from 'csv-parse';
import { stringify } from 'csv-stringify/sync';
import { jobModelRouter } from '../models/job-model.js';
import type { HostConfig } from '../config/schema.js';
import { safeCell } from '../services/csv-cell.js';
import type { StreamingObjectStore } from '../services/object-store-selection.js';
import { countTurnUsage } from '../usage/token-usage.js';
import type { EtlJobRow, EtlJobStore, EtlReport, JobOutcome } from './job-store.js';
import { parsedRecordsKey, parsedRecordsReader, parsedRecordsWriter } from './parsed-records.js';
import { SOURCE_CSV_OPTIONS } from './source-csv.js';

export interface JobRunDeps {
  config: HostConfig;
  store: EtlJobStore;
  runtimes: KeyedRegistry<EtlRuntime>;
  providers: KeyedRegistry<ModelProvider>;
  objectStore: StreamingObjectStore;
  logger: Logger;
}

/** Where attempt `attempt` of a job writes its output: a key of its own, so a recovered job never mixes attempts. */
export const outputKey = (job: Pick<EtlJobRow, 'agent_id' | 'id'>, attempt: number) => `etl/${job.agent_id}/${job.id}/output-${attempt}.csv`;

/** Why a plan cannot be used: each target column mapped once, in order, from a header column or none. */
function planProblem(plan: EtlPlan, job: EtlJobRow): string | undefined {
  const targets = plan.mappings.map((m) => m.target);
  if (targets.join('\u0000') !== job.target_schema.map((c) => c.name).join('\u0000')) return `it maps [${targets.join(', ')}], not the target columns in order`;
  const stray = plan.mappings.find((m) => m.source !== null && !job.source_columns.includes(m.source));
  return stray ? `"${stray.target}" maps from "${stray.source}", which is not a source column` : undefined;
}

/**
 * One attempt at a job. The plan is made once (the runtime's, with the job's model) and kept, so a recovered job
 * converts the same way; then the source's parsed records are read as a stream, each row converted by the runtime's
 * converter and written (formula cells escaped) to a temporary file that becomes the attempt's output object.
 * Progress is stored every `[etl] progress_every_rows` rows; the report counts every issue and lists the first
 * `report_issue_cap`. Resolves with the job as the attempt ended it, or undefined when the attempt lost it.
 */
export async function runJob(job: EtlJobRow, deps: JobRunDeps, signal: AbortSignal): Promise<EtlJobRow | undefined> {
  const { store, config, objectStore } = deps;
  const token = job.lease_token!;
  const recordsKey = parsedRecordsKey(job);
  // An ended job needs its parsed records no more; while the attempt may still lose the job, the next one does.
  const finish = async (outcome: JobOutcome) => {
    const ended = await store.finish(job.id, token, outcome);
    if (ended) await objectStore.delete(recordsKey).catch(() => undefined);
    return ended;
  };
  const fail = (code: string, message: string, report: EtlReport | null = null) => finish({ status: 'failed', error: { code, message }, report });
  const runtime = deps.runtimes.get(job.runtime_key);
  if (!runtime) return fail('ETL_RUNTIME_MISSING', `no enabled plugin provides the ETL runtime "${job.runtime_key}"`);
  let plan = job.plan;
  if (!plan) {
    const router = jobModelRouter(job.model_binding, config, deps.providers);
    try {
      plan = await runtime.plan(
        { source_columns: job.source_columns, sample_rows: job.sample_rows, target: job.target_schema, instructions: job.instructions },
        { model: router.chatModel('general'), signal },
      );
    } catch (error) {
      if (signal.aborted) throw error;
      return fail('ETL_PLAN_FAILED', `the column plan could not be made: ${(error as Error).message}`);
    }
    if (!(await store.savePlan(job.id, token, plan, countTurnUsage(router.calls).summary))) return undefined;
  }
  const problem = planProblem(plan, job);
  if (problem) return fail('ETL_PLAN_INVALID', `the runtime's plan cannot be used: ${problem}`);
  const convert = runtime.converter(plan, { source_columns: job.source_columns, target: job.target_schema });
  // Outputs of earlier attempts (a worker that stopped after writing one) are not this job's output.
  for (let attempt = 1; attempt < job.attempt_count; attempt++) await objectStore.delete(outputKey(job, attempt)).catch(() => undefined);

  const { report_issue_cap: cap, progress_every_rows: every } = config.etl;
  const report: EtlReport = {
    rows_total: job.rows_total,
    rows_written: 0,
    rows_rejected: 0,
    cells_coerced: 0,
    cells_rejected: 0,
    issues: [],
    issues_not_listed: 0,
  };
  const temp = path.join(os.tmpdir(), `agent-host-etl-${job.id}-${job.attempt_count}.csv`);
  let done = 0;
  let header = true;
  const columns = job.target_schema.map((c) => c.name);
  const cast = { number: (n: number) => String(n) };
  // Batches of records flow reader → converter → file as stream pipes: no promise per row (an async iterator's are
  // costly in a host with async hooks on), and the stream's and the stringifier's cost is paid per batch, not per row.
  const converter = new Transform({
    writableObjectMode: true,
    writableHighWaterMark: 1,
    transform(batch: string[][], _encoding, next) {
      const before = done;
      const values: (string | number)[][] = [];
      for (const record of header ? batch.slice(1) : batch) {
        done++;
        const row = convert(record);
        for (const issue of row.issues) {
          if (issue.kind === 'coerced') report.cells_coerced++;
          else report.cells_rejected++;
          if (report.issues.length < cap) report.issues.push({ row: done, ...issue });
          else report.issues_not_listed++;
        }
        if (row.rejected) report.rows_rejected++;
        else {
          report.rows_written++;
          values.push(row.values.map(safeCell));
        }
      }
      const text = stringify(values, { header, columns, cast }) || undefined;
      header = false;
      // Progress is stored before the conversion goes on, as the job's rows_done promises.
      if (Math.floor(done / every) > Math.floor(before / every)) store.progress(job.id, token, done).then(() => next(null, text), next);
      else next(null, text);
    },
  });
  try {
    // The records the check accepted at upload; a job stored before they were kept parses its CSV (into the same
    // batches, through the parsed-records form).
    const parsed = await objectStore.exists(recordsKey);
    const source = await objectStore.open(parsed ? recordsKey : job.source_object_key);
    const records = parsed ? [parsedRecordsReader()] : [parse(SOURCE_CSV_OPTIONS), parsedRecordsWriter(), parsedRecordsReader()];
    await pipeline([Readable.from(source.body), ...records, converter, createWriteStream(temp, { mode: 0o600 })], { signal });
    if (signal.aborted) throw signal.reason;
    const key = outputKey(job, job.attempt_count);
    const size = (await stat(temp)).size;
    await objectStore.putStream(key, createReadStream(temp), { contentType: 'text/csv; charset=utf-8', size });
    const ended = await finish({ status: 'succeeded', output_object_key: key, output_size_bytes: size, report });
    if (!ended) await objectStore.delete(key).catch(() => undefined);
    return ended;
  } catch (error) {
    if (signal.aborted) throw error;
    deps.logger.warn({ err: error, job_id: job.id }, 'an ETL job failed');
    return await fail('ETL_CONVERSION_FAILED', (error as Error).message, report);
  } finally {
    await rm(temp, { force: true });
  }
}
