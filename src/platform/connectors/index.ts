import type { PlatformConnector } from '../runtime/connector.ts';
import { airtableConnector } from './airtable.ts';
import { gmailConnector } from './gmail.ts';
import { githubConnector } from './github.ts';
import { googleCalendarConnector } from './googleCalendar.ts';
import { googleDocsConnector } from './googleDocs.ts';
import { googleDriveConnector } from './googleDrive.ts';
import { googleSheetsConnector } from './googleSheets.ts';
import { linearConnector } from './linear.ts';
import { notionConnector } from './notion.ts';

/** The platform connectors the runtime runs (issue 16); `folder` and `url` are in ./spec.ts. */
export const platformConnectors: PlatformConnector[] = [githubConnector, notionConnector, linearConnector, airtableConnector, gmailConnector, googleCalendarConnector, googleDriveConnector, googleDocsConnector, googleSheetsConnector];
