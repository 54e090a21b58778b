import type { Settings } from '../../config/settings.ts';
import { unconfigured } from './errors.ts';
import { OAuthClient, type OAuthApp } from './oauthClient.ts';
import type { OutboundFetch } from './outboundFetch.ts';
import { providerCall, type ProviderCall } from './providerCall.ts';
import { oauthProvider, oauthProviders } from './providers/index.ts';
import type { OAuthEndpoints, ProviderDef } from './providers/types.ts';

/** Somewhere else than a provider's public addresses (a local fake provider, a GitHub Enterprise host). */
export interface ProviderOverrides {
  endpoints?: Partial<OAuthEndpoints>;
  apiBase?: string;
}

/**
 * The providers as this server reaches them: the registry's definitions with their addresses
 * resolved (factory overrides, then the sync settings' API bases, then the public defaults), the
 * OAuth app of each from the settings, and clients and API calls through the outbound guard.
 * Settings are read at each use.
 */
export class ProviderRegistry {
  constructor(
    private readonly d: {
      settings: () => Settings;
      fetch: OutboundFetch;
      overrides?: Record<string, ProviderOverrides>;
    },
  ) {}

  /** The provider, resolved; undefined for an id the registry does not know. */
  find(id: string): ProviderDef | undefined {
    const def = oauthProvider(id);
    if (!def) return undefined;
    const o = this.d.overrides?.[id];
    const apiBase = o?.apiBase ?? settingsApiBase(this.d.settings(), id) ?? def.apiBase;
    return { ...def, endpoints: { ...def.endpoints, ...o?.endpoints }, apiBase };
  }

  get(id: string): ProviderDef {
    const def = this.find(id);
    if (!def) throw new Error(`unknown OAuth provider ${id}; one of ${oauthProviders.map((p) => p.id).join(', ')}`);
    return def;
  }

  /** The provider's OAuth app, or null when its two settings are not both set. */
  app(def: ProviderDef): OAuthApp | null {
    return this.d.settings().oauthClients[def.client] ?? null;
  }

  /** An OAuth client of the provider; a 422 naming the settings when its app is not configured. */
  client(def: ProviderDef): { client: OAuthClient; app: OAuthApp } {
    const app = this.app(def);
    if (!app) throw unconfigured(def);
    return { client: new OAuthClient(def, app, this.d.fetch), app };
  }

  call(def: ProviderDef): ProviderCall {
    return providerCall(def.id, this.d.fetch, def.apiBase);
  }
}

/** The API base the sync settings give the provider (`settings.sync.apiBase`, CNS_<PROVIDER>_API_URL). */
function settingsApiBase(settings: Settings, id: string): string | undefined {
  return settings.sync.apiBase[id] || undefined;
}
