import type {
  AgentSnapshot,
  ChatCallOptions,
  ChatMessage,
  ChatModel,
  ChatStreamChunk,
  Logger,
  ModelChoice,
  ModelProvider,
  ModelRouter,
  ModelStage,
} from '@agent-host/sdk';
import type { HostConfig } from '../config/schema.js';
import type { KeyedRegistry } from '@agent-host/sdk/kernel';
import type { ModelCall } from '../usage/token-usage.js';
import { finalModelSlot } from './final-model-rule.js';

/** Request-level model fields (spec 4.2); any of them makes an explicit override. */
export interface ModelOverride {
  model_name?: string | undefined;
  model_provider?: string | undefined;
  model_temperature?: number | undefined;
}

/** One stage's model and why it was chosen, for `stage_decisions[]`. */
interface StageDecision extends ModelChoice {
  stage: ModelStage;
  reason: string;
}

const SLOT_OF: Record<Exclude<ModelStage, 'final'>, string> = {
  tool_call: 'tool_call_model',
  general: 'general_model',
  complex_task: 'complex_task_model',
  reasoning: 'reasoning_model',
};

type Slot = { model_name?: string; model_provider?: string; model_temperature?: number | null } | null | undefined;

/** The agent's primary triple, or the global default when the agent names no model. */
export function primaryModel(agent: Pick<AgentSnapshot, 'model_name' | 'model_provider' | 'model_temperature'> | null, config: HostConfig): ModelChoice {
  if (agent?.model_name && agent.model_provider) {
    return { model_name: agent.model_name, model_provider: agent.model_provider, model_temperature: agent.model_temperature, role: 'agent_primary' };
  }
  return {
    model_name: config.models.default_model_name,
    model_provider: config.models.default_model_provider,
    model_temperature: agent?.model_temperature ?? null,
    role: 'global_default',
  };
}

/** What the router needs of the turn. */
export interface RoutedTurn {
  /** The user's message: the final stage's slot follows from it. */
  message: string;
  /** Runs before every model call; throws to stop the turn (a human took over). */
  beforeModelCall?: () => Promise<void>;
  /** The turn's logger, handed to each call (`ChatCallOptions.log`) unless the caller gives its own. */
  log?: Logger;
}

/**
 * Resolves each stage's model by the spec's priority: explicit request
 * fields, then the agent's routing config (when enabled and not overridden),
 * then the agent's primary triple, then the global default. Records every
 * decision with its reason for `context_payload.model_routing`, and every
 * call's usage.
 */
export class TurnModelRouter implements ModelRouter {
  readonly calls: ModelCall[] = [];
  private readonly decisions: StageDecision[] = [];
  private final: StageDecision | undefined;

  constructor(
    private readonly agent: AgentSnapshot | null,
    private readonly override: ModelOverride | null,
    private readonly config: HostConfig,
    private readonly providers: KeyedRegistry<ModelProvider>,
    private readonly turn: RoutedTurn,
  ) {}

  get explicitOverride(): boolean {
    const o = this.override;
    return !!o && (o.model_name !== undefined || o.model_provider !== undefined || o.model_temperature !== undefined);
  }

  private get routingConfig(): Record<string, unknown> | null {
    return (this.agent?.model_routing_config as Record<string, unknown> | null | undefined) ?? null;
  }

  /** `collapse_to_explicit_override` (default true): a request's `model_*` makes the whole turn one model path. */
  private get collapse(): boolean {
    return this.routingConfig?.collapse_to_explicit_override !== false;
  }

  /** `fallback_to_primary_model` (default true): an empty slot uses the primary triple instead of failing. */
  private get fallback(): boolean {
    return this.routingConfig?.fallback_to_primary_model !== false;
  }

  private get routing(): Record<string, unknown> | null {
    const routing = this.routingConfig;
    return routing?.enabled === true && !(this.explicitOverride && this.collapse) ? routing : null;
  }

  /** The agent's primary triple (or the global default); without collapse, a request override replaces it. */
  private primary(): ModelChoice {
    const primary = primaryModel(this.agent, this.config);
    if (!this.explicitOverride) return primary;
    const o = this.override!;
    return {
      model_name: o.model_name ?? primary.model_name,
      model_provider: o.model_provider ?? primary.model_provider,
      model_temperature: o.model_temperature ?? primary.model_temperature,
      role: 'explicit_override',
    };
  }

  choose(stage: ModelStage): ModelChoice {
    const { reason, ...choice } = this.decide(stage);
    this.decisions.push({ stage, ...choice, reason });
    return choice;
  }

  private decide(stage: ModelStage): ModelChoice & { reason: string } {
    if (this.explicitOverride && !this.routing) {
      return { ...this.primary(), reason: 'the request names a model: one model path for every stage' };
    }
    const routing = this.routing;
    if (!routing) {
      const primary = this.primary();
      return {
        ...primary,
        reason:
          primary.role === 'agent_primary' ? "routing is off: the agent's primary model" : 'routing is off and the agent names no model: the global default',
      };
    }
    const picked = stage === 'final' ? finalModelSlot(this.turn.message) : { slot: SLOT_OF[stage], reason: `the ${stage} stage` };
    const slot = routing[picked.slot] as Slot;
    if (slot?.model_name && slot.model_provider) {
      return {
        model_name: slot.model_name,
        model_provider: slot.model_provider,
        model_temperature: slot.model_temperature ?? this.primary().model_temperature,
        role: picked.slot,
        reason: picked.reason,
      };
    }
    if (!this.fallback) {
      const reason = `${picked.reason}; ${picked.slot} is empty and fallback_to_primary_model is false`;
      this.decisions.push({ stage, model_name: '', model_provider: '', model_temperature: null, role: 'unresolved', reason });
      throw new Error(`model_routing_config.${picked.slot} is empty and fallback_to_primary_model is false: no model for the ${stage} stage`);
    }
    const fallback = this.explicitOverride
      ? "the request's model in place of the primary triple (collapse_to_explicit_override is false)"
      : 'the primary triple';
    return { ...this.primary(), role: 'primary_fallback', reason: `${picked.reason}; ${picked.slot} is empty: ${fallback}` };
  }

  chatModel(stage: ModelStage): ChatModel {
    const choice = this.choose(stage);
    const provider = this.providers.get(choice.model_provider);
    if (!provider) throw new Error(`no enabled plugin provides model_provider "${choice.model_provider}"`);
    // Only catalog models (and the operator's configured default) run: they are the ones an operator chose and
    // priced, so cost caps see every call.
    const entry = this.config.models.catalog.find((m) => m.model_provider === choice.model_provider && m.model_name === choice.model_name);
    const { default_model_name, default_model_provider } = this.config.models;
    const isDefault = choice.model_name === default_model_name && choice.model_provider === default_model_provider;
    if (!entry && !isDefault) throw new Error(`model "${choice.model_name}" of model_provider "${choice.model_provider}" is not in the model catalog`);
    const model = provider.createChatModel({
      model_name: choice.model_name,
      temperature: choice.model_temperature,
      timeoutMs: this.config.timeouts.model_request_seconds * 1000,
      options: entry?.options ?? {},
    });
    this.final = this.decisions.at(-1);
    return this.recording(model);
  }

  /** `context_payload.model_routing` (spec 2.2). */
  routingRecord() {
    const routing = this.agent?.model_routing_config as Record<string, unknown> | null | undefined;
    return {
      route_mode: this.routing ? 'routed' : this.explicitOverride ? 'explicit_override' : 'single',
      policy_version: (routing?.policy_version as string | undefined) ?? null,
      explicit_override_active: this.explicitOverride,
      collapse_to_explicit_override: this.collapse,
      fallback_to_primary_model: this.fallback,
      stage_decisions: this.decisions,
      final_model_role: this.final?.role ?? null,
      final_model_config: this.final
        ? { model_name: this.final.model_name, model_provider: this.final.model_provider, model_temperature: this.final.model_temperature }
        : null,
    };
  }

  /** The model of the final reply stage: the turn's flat `model_*` fields. */
  get finalModel(): ModelChoice | undefined {
    return this.final;
  }

  /** Wraps a model so each call's usage (or the texts to estimate it) is recorded. */
  private recording(model: ChatModel): ChatModel {
    const calls = this.calls;
    const beforeModelCall = this.turn.beforeModelCall ?? (async () => {});
    const promptOf = (messages: ChatMessage[]) => messages.map((m) => m.content).join('\n');
    const { log } = this.turn;
    const withLog = (options: ChatCallOptions | undefined): ChatCallOptions | undefined => (log && !options?.log ? { ...options, log } : options);
    return {
      provider: model.provider,
      modelName: model.modelName,
      async *stream(messages: ChatMessage[], options?: ChatCallOptions): AsyncIterable<ChatStreamChunk> {
        await beforeModelCall();
        const call: ModelCall = {
          model_provider: model.provider,
          model_name: model.modelName,
          prompt_text: promptOf(messages),
          reply_text: '',
          started_at: Date.now(),
        };
        calls.push(call);
        try {
          for await (const chunk of model.stream(messages, withLog(options))) {
            if (chunk.type === 'token') call.reply_text += chunk.content;
            else if (chunk.type === 'usage') call.provider_usage = chunk.usage;
            yield chunk;
          }
        } finally {
          call.ended_at = Date.now();
        }
      },
      async invoke(messages: ChatMessage[], options?: ChatCallOptions) {
        await beforeModelCall();
        const call: ModelCall = {
          model_provider: model.provider,
          model_name: model.modelName,
          prompt_text: promptOf(messages),
          reply_text: '',
          started_at: Date.now(),
        };
        calls.push(call);
        const result = await model.invoke(messages, withLog(options)).finally(() => (call.ended_at = Date.now()));
        call.reply_text = result.content;
        call.provider_usage = result.usage ?? null;
        return result;
      },
    };
  }
}
