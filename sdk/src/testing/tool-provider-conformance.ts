import type { ToolProvider } from '../extensions/tools.js';
import { conformanceRule, type ConformanceRule, type Fail } from './conformance.js';
import type { ToolSample } from './tool-backend-conformance.js';

const SUITE = 'tool provider';

/**
 * What every {@link ToolProvider} must do: name itself, list each tool once with a description and an object input
 * schema, answer a call of a listed tool with a `success` outcome, and not answer `success` for a tool it does not
 * list. Deadlines, cancellation and exceptions are core's to handle, so the suite does not ask for them.
 * @beta
 */
export function toolProviderConformance(provider: ToolProvider, sample: { tool: ToolSample }): ConformanceRule[] {
  const options = { timeoutMs: 15_000 };
  return [
    conformanceRule(SUITE, 'displayName names the provider', async (fail: Fail) => {
      if (typeof provider.displayName !== 'string' || provider.displayName.trim() === '') fail(`displayName is ${JSON.stringify(provider.displayName)}`);
    }),
    conformanceRule(SUITE, 'listTools() lists each tool once, with a description and an object input schema', async (fail: Fail) => {
      const tools = await provider.listTools(options);
      const names = tools.map((tool) => tool.name);
      if (!names.includes(sample.tool.name)) fail(`${JSON.stringify(sample.tool.name)} is not among ${JSON.stringify(names)}`);
      if (new Set(names).size !== names.length) fail(`a name is listed twice: ${JSON.stringify(names)}`);
      for (const tool of tools) {
        if (typeof tool.name !== 'string' || tool.name.trim() === '') fail(`a tool has the name ${JSON.stringify(tool.name)}`);
        if (typeof tool.description !== 'string') fail(`${tool.name} has description ${JSON.stringify(tool.description)}`);
        const schema = tool.input_schema as { type?: unknown } | null;
        if (typeof schema !== 'object' || schema === null || Array.isArray(schema) || schema.type !== 'object')
          fail(`${tool.name} has input schema ${JSON.stringify(tool.input_schema)}; a tool's arguments are an object`);
      }
    }),
    conformanceRule(SUITE, 'callTool() of a listed tool is a success with its result', async (fail: Fail) => {
      const outcome = await provider.callTool(sample.tool.name, sample.tool.args, options);
      if (outcome?.status !== 'success') fail(`the outcome is ${JSON.stringify(outcome).slice(0, 200)}`);
      if (outcome.result === undefined) fail('the outcome has no result');
    }),
    conformanceRule(SUITE, 'a tool it does not list is not a success', async (fail: Fail) => {
      const outcome = await provider.callTool('no_such_tool_of_the_conformance_suite', {}, options).catch(() => undefined);
      if (outcome?.status === 'success') fail(`a tool it does not list answered ${JSON.stringify(outcome).slice(0, 200)}`);
    }),
  ];
}
