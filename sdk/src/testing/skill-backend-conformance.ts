import type { SkillBackend, SkillInvocation, ToolHandle } from '../extensions/tools.js';
import { conformanceRule, type ConformanceRule, type Fail } from './conformance.js';

const SUITE = 'skill backend';

/** What {@link skillBackendConformance} runs: a working skill version's config and input, and a broken config. @public */
export interface SkillBackendSample {
  config: Record<string, unknown>;
  invalidConfig: Record<string, unknown>;
  input: Record<string, unknown>;
  /** The tools of the skill's server, for backends that call tools (as core hands them over). */
  tools?: ToolHandle;
}

/**
 * What every {@link SkillBackend} must do: accept a working config and refuse a broken one with issues located under
 * `config`, run a skill to a `success` outcome, and make a failure (its tools failing, a config gone stale) an `error`
 * outcome rather than an exception.
 * @public
 */
export function skillBackendConformance(backend: SkillBackend, sample: SkillBackendSample): ConformanceRule[] {
  const options = { timeoutMs: 15_000 };
  const invocation = (overrides: Partial<SkillInvocation> = {}): SkillInvocation => ({
    skill_version_id: 'conformance-version',
    backend_ref_id: sample.tools ? 'conformance-server' : null,
    config: sample.config,
    input: sample.input,
    ...(sample.tools && { tools: sample.tools }),
    ...overrides,
  });
  const outcomeOf = (call: SkillInvocation, fail: Fail) => backend.invoke(call, options).catch((error: unknown) => fail(`invoke() threw ${String(error)}`));
  return [
    conformanceRule(SUITE, 'validateConfig() accepts a working config and refuses a broken one with issues under config', async (fail: Fail) => {
      const accepted = backend.validateConfig(sample.config);
      if (accepted.length > 0) fail(`the working config was refused: ${JSON.stringify(accepted)}`);
      const refused = backend.validateConfig(sample.invalidConfig);
      if (refused.length === 0) fail(`${JSON.stringify(sample.invalidConfig)} was accepted`);
      for (const issue of refused) {
        if (issue.loc[0] !== 'config' || typeof issue.msg !== 'string' || issue.msg === '')
          fail(`the issue ${JSON.stringify(issue)} does not start its loc at "config" with a message`);
      }
    }),
    conformanceRule(SUITE, 'invoke() of a working skill is a success with a result', async (fail: Fail) => {
      const outcome = await outcomeOf(invocation(), fail);
      if (outcome.status !== 'success' || outcome.result === undefined) fail(`the outcome is ${JSON.stringify(outcome).slice(0, 200)}`);
    }),
    conformanceRule(SUITE, 'a skill whose tools fail is an error outcome, not an exception', async (fail: Fail) => {
      if (!sample.tools) return;
      const failing: ToolHandle = { list: () => sample.tools!.list(), call: async () => ({ status: 'error', result: null, error: 'the tool failed' }) };
      const outcome = await outcomeOf(invocation({ tools: failing }), fail);
      if (outcome.status === 'success') fail('the tools failed and the skill succeeded');
    }),
    conformanceRule(SUITE, 'a stored config that went stale is an error outcome, not an exception', async (fail: Fail) => {
      const outcome = await outcomeOf(invocation({ config: sample.invalidConfig }), fail);
      if (outcome.status !== 'error') fail(`invoking with a config validateConfig() refuses gave ${JSON.stringify(outcome).slice(0, 200)}`);
    }),
  ];
}
