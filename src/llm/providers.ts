import { AnthropicProvider } from './anthropicProvider.ts';
import { parseModelRef } from './modelRef.ts';
import { OpenAiProvider } from './openaiProvider.ts';
import type { ChatProvider } from './provider.ts';

/** What the service knows about its language-model providers (filled from the CNS_* variables). */
export interface LlmSettings {
  /** CNS_OPENAI_API_KEY, CNS_OPENAI_BASE_URL (also the server of any other prefix, e.g. `ollama:`). */
  openai: { apiKey?: string; baseUrl?: string };
  /** CNS_ANTHROPIC_API_KEY, CNS_ANTHROPIC_BASE_URL. */
  anthropic: { apiKey?: string; baseUrl?: string };
  /** CNS_DEFAULT_MODEL, as provider:model; its provider serves bare model names of no known family. */
  defaultModel: string;
}

/** A model whose provider lacks a setting; `setting` names the variable to set. */
export class ProviderNotConfigured extends Error {
  constructor(
    readonly setting: string,
    message: string,
  ) {
    super(message);
    this.name = 'ProviderNotConfigured';
  }
}

/** A string that names no model: not `provider:model`, nor a bare model name. */
export class InvalidModelRef extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidModelRef';
  }
}

/** Which providers can be used, without any secret: for a status answer. */
export interface ProvidersStatus {
  defaultModel: string;
  /** Whether the default model's provider is configured, and if not, what is missing. */
  defaultModelReady: boolean;
  defaultModelProblem: string | null;
  openai: { configured: boolean; customBaseUrl: boolean };
  anthropic: { configured: boolean; customBaseUrl: boolean };
  /** Other prefixes (`ollama:`) go to the OpenAI-compatible server at CNS_OPENAI_BASE_URL. */
  openaiCompatible: { configured: boolean };
}

/** The SDK requires a key; a keyless compatible server (Ollama) ignores whatever it is sent. */
const KEYLESS_PLACEHOLDER = 'no-key';

/** The provider for each `provider:model` reference (or bare model name), built on first use and kept. */
export class ChatProviders {
  private readonly cache = new Map<string, ChatProvider>();

  constructor(
    private readonly settings: LlmSettings,
    private readonly options: { timeoutMs?: number } = {},
  ) {}

  /**
   * Throws InvalidModelRef, or ProviderNotConfigured naming the missing setting. A bare model name
   * takes its family's provider, else the default model's (parseModelRef).
   */
  resolve(modelRef: string): { provider: ChatProvider; model: string } {
    const ref = parseModelRef(modelRef, this.defaultProvider());
    if (typeof ref === 'string') throw new InvalidModelRef(`model ${ref}`);
    const missing = this.missingSetting(ref.provider);
    if (missing) throw missing;
    let provider = this.cache.get(ref.provider);
    if (!provider) {
      provider = this.build(ref.provider);
      this.cache.set(ref.provider, provider);
    }
    return { provider, model: ref.model };
  }

  describe(): ProvidersStatus {
    const { openai, anthropic, defaultModel } = this.settings;
    const ref = parseModelRef(defaultModel);
    const problem = typeof ref === 'string' ? `CNS_DEFAULT_MODEL ${ref}` : (this.missingSetting(ref.provider)?.message ?? null);
    return {
      defaultModel,
      defaultModelReady: problem === null,
      defaultModelProblem: problem,
      openai: { configured: !this.missingSetting('openai'), customBaseUrl: Boolean(openai.baseUrl) },
      anthropic: { configured: !this.missingSetting('anthropic'), customBaseUrl: Boolean(anthropic.baseUrl) },
      openaiCompatible: { configured: Boolean(openai.baseUrl) },
    };
  }

  /** The provider of CNS_DEFAULT_MODEL, which bare model names of no known family go to. */
  private defaultProvider(): string | undefined {
    const ref = parseModelRef(this.settings.defaultModel);
    return typeof ref === 'string' ? undefined : ref.provider;
  }

  private missingSetting(provider: string): ProviderNotConfigured | null {
    const { openai, anthropic } = this.settings;
    if (provider === 'anthropic') {
      return anthropic.apiKey ? null : new ProviderNotConfigured('CNS_ANTHROPIC_API_KEY', 'anthropic models need CNS_ANTHROPIC_API_KEY, which is not set');
    }
    if (provider === 'openai') {
      return openai.apiKey || openai.baseUrl
        ? null
        : new ProviderNotConfigured('CNS_OPENAI_API_KEY', 'openai models need CNS_OPENAI_API_KEY (or CNS_OPENAI_BASE_URL for a compatible server without a key), which is not set');
    }
    return openai.baseUrl
      ? null
      : new ProviderNotConfigured('CNS_OPENAI_BASE_URL', `${provider} models are served by the OpenAI-compatible server at CNS_OPENAI_BASE_URL, which is not set`);
  }

  private build(provider: string): ChatProvider {
    const { openai, anthropic } = this.settings;
    const timeoutMs = this.options.timeoutMs;
    if (provider === 'anthropic') return new AnthropicProvider({ apiKey: anthropic.apiKey!, baseURL: anthropic.baseUrl, timeoutMs });
    return new OpenAiProvider({ name: provider, apiKey: openai.apiKey || KEYLESS_PLACEHOLDER, baseURL: openai.baseUrl, timeoutMs });
  }
}
