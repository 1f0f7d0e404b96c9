import { definePlugin, extensionPoints, z, type SkillBackend, type SkillInvocation, type ToolCallOutcome, type ValidationIssue } from '@agent-host/sdk';

/** What a skill version of this backend stores as its `config`. */
const skillConfig = z.object({ template: z.string().includes('{text}').describe('The answer, with {text} replaced by the input text') }).strict();

/**
 * Runs skills of one backend type. This one fills a template from the skill's input; replace `invoke` with your
 * service. A failure is an `error` outcome, never an exception.
 */
class __CLASS__ implements SkillBackend {
  validateConfig(config: Readonly<Record<string, unknown>>): ValidationIssue[] {
    const parsed = skillConfig.safeParse(config);
    return parsed.success ? [] : parsed.error.issues.map((issue) => ({ loc: ['config', ...issue.path.map(String)], msg: issue.message, type: issue.code }));
  }

  async invoke(invocation: SkillInvocation): Promise<ToolCallOutcome> {
    const config = skillConfig.safeParse(invocation.config);
    if (!config.success) return { status: 'error', result: null, error: `the skill config is no longer valid: ${config.error.issues[0]!.message}` };
    const text = typeof invocation.input.text === 'string' ? invocation.input.text : '';
    return { status: 'success', result: { answer: config.data.template.replaceAll('{text}', text) } };
  }
}

export default definePlugin({
  id: '__PLUGIN_ID__',
  sdk: '__SDK_RANGE__',
  register(env) {
    env.registerInit({
      deps: { skillBackends: extensionPoints.skillBackends },
      async init({ skillBackends }) {
        skillBackends.register('__KEY__', new __CLASS__());
      },
    });
  },
});
