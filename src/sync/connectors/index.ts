import type { PlatformConnector } from '../runtime/connector.ts';
import { airtableConnector } from './airtable.ts';
import { githubConnector } from './github.ts';
import { linearConnector } from './linear.ts';
import { notionConnector } from './notion.ts';

/** The platform connectors the runtime runs (issue 16); `folder` and `url` are in ./spec.ts. */
export const platformConnectors: PlatformConnector[] = [githubConnector, notionConnector, linearConnector, airtableConnector];
