import { airtable } from './airtable.ts';
import { github } from './github.ts';
import { googleProviders } from './google.ts';
import { linear } from './linear.ts';
import { notion } from './notion.ts';
import type { ProviderDef } from './types.ts';

export type { ProviderDef } from './types.ts';

/** The providers `/oauth/{provider}/…` serves: issue 16's four, and the five Google ones (issue 17). */
export const oauthProviders: readonly ProviderDef[] = [github, notion, linear, airtable, ...googleProviders];

export const oauthProviderIds = oauthProviders.map((p) => p.id) as [string, ...string[]];

export function oauthProvider(id: string): ProviderDef | undefined {
  return oauthProviders.find((p) => p.id === id);
}
