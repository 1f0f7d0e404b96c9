import type { ToolBackend, ToolServerConnection } from '../extensions/tools.js';
import { abortedSignal, conformanceRule, type ConformanceRule, type Fail } from './conformance.js';

const SUITE = 'tool backend';

/** A tool call for the suite to make: the tool's name and arguments it accepts. @public */
export interface ToolSample {
  name: string;
  args: Record<string, unknown>;
}

/** What {@link toolBackendConformance} runs against: a reachable server of the backend's transport and its tools. @public */
export interface ToolBackendSample {
  server: ToolServerConnection;
  /** A tool of `server` that answers at once. */
  tool: ToolSample;
  /** A tool of `server` that takes more than a second to answer, for the deadline rule (skipped without one). */
  slowTool?: ToolSample;
  /** A `connection_config` the backend must refuse. */
  invalidConfig: Record<string, unknown>;
}

/**
 * What every {@link ToolBackend} must do: accept the configuration of a working server and refuse a broken one with
 * issues, report the server healthy, list its tools with descriptions and input schemas, call a tool with a
 * `success` outcome, make a failed call an outcome rather than an exception, stop at the call's deadline with a
 * `timeout` outcome, and not succeed for an aborted caller.
 * @public
 */
export function toolBackendConformance(backend: ToolBackend, sample: ToolBackendSample): ConformanceRule[] {
  const options = { timeoutMs: 15_000 };
  return [
    conformanceRule(
      SUITE,
      'validateConfig() accepts a working configuration and refuses a broken one with issues under connection_config',
      async (fail: Fail) => {
        const accepted = backend.validateConfig(sample.server.connection_config);
        if (accepted.length > 0) fail(`the working configuration was refused: ${JSON.stringify(accepted)}`);
        const refused = backend.validateConfig(sample.invalidConfig);
        if (refused.length === 0) fail(`${JSON.stringify(sample.invalidConfig)} was accepted`);
        for (const issue of refused) {
          if (!Array.isArray(issue.loc) || typeof issue.msg !== 'string' || issue.msg === '' || typeof issue.type !== 'string')
            fail(`the issue ${JSON.stringify(issue)} is not {loc, msg, type}`);
          // The host serves the issue under `body`, so its loc must name the field the administrator sent.
          if (issue.loc[0] !== 'connection_config') fail(`the issue ${JSON.stringify(issue)} does not start its loc at "connection_config"`);
        }
      },
    ),
    conformanceRule(SUITE, 'healthCheck() reports a working server healthy', async (fail: Fail) => {
      const health = await backend.healthCheck(sample.server, options);
      if (health.ok !== true) fail(`healthCheck() gave ${JSON.stringify(health)}`);
    }),
    conformanceRule(SUITE, 'listTools() lists each tool once, with a description and an object input schema', async (fail: Fail) => {
      const tools = await backend.listTools(sample.server, options);
      const names = tools.map((tool) => tool.name);
      if (!names.includes(sample.tool.name)) fail(`${JSON.stringify(sample.tool.name)} is not among ${JSON.stringify(names)}`);
      if (new Set(names).size !== names.length) fail(`a name is listed twice: ${JSON.stringify(names)}`);
      for (const tool of tools) {
        if (typeof tool.description !== 'string') fail(`${tool.name} has description ${JSON.stringify(tool.description)}`);
        if (typeof tool.input_schema !== 'object' || tool.input_schema === null || Array.isArray(tool.input_schema))
          fail(`${tool.name} has input schema ${JSON.stringify(tool.input_schema)}`);
      }
    }),
    conformanceRule(SUITE, 'callTool() of a tool that answers is a success with its result', async (fail: Fail) => {
      const outcome = await backend.callTool(sample.server, sample.tool.name, sample.tool.args, options);
      if (outcome.status !== 'success') fail(`the outcome is ${JSON.stringify(outcome).slice(0, 200)}`);
      if (outcome.result === undefined) fail('the outcome has no result');
    }),
    conformanceRule(SUITE, 'a call that fails is an error outcome, not an exception', async (fail: Fail) => {
      const outcome = await backend
        .callTool(sample.server, 'no_such_tool_of_the_conformance_suite', {}, options)
        .catch((error: unknown) => fail(`callTool() threw ${String(error)}`));
      if (outcome.status !== 'error') fail(`a tool the server does not have gave ${JSON.stringify(outcome).slice(0, 200)}`);
      if (typeof outcome.error !== 'string' || outcome.error === '') fail('the error outcome does not say what went wrong');
    }),
    conformanceRule(SUITE, 'a call stops at its deadline with a timeout outcome', async (fail: Fail) => {
      if (!sample.slowTool) return;
      const started = Date.now();
      const outcome = await backend.callTool(sample.server, sample.slowTool.name, sample.slowTool.args, { timeoutMs: 200 });
      const took = Date.now() - started;
      if (outcome.status !== 'timeout') fail(`a call past its 200 ms deadline gave ${JSON.stringify(outcome).slice(0, 200)}`);
      if (took > 2_000) fail(`the timeout outcome came after ${took} ms, not at the 200 ms deadline`);
    }),
    conformanceRule(SUITE, 'a call whose caller has gone does not succeed', async (fail: Fail) => {
      const outcome = await backend.callTool(sample.server, sample.tool.name, sample.tool.args, { ...options, signal: abortedSignal() }).catch(() => undefined);
      if (outcome?.status === 'success') fail('a call with an aborted signal was made and succeeded');
    }),
  ];
}
