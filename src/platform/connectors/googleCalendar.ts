import type { PlatformConnector } from '../runtime/connector.ts';
import { lazyPull } from '../runtime/lazyConnector.ts';
import { GOOGLE_SCOPES } from '../oauth/providers/google.ts';
import { googleAuthHeaders, googleRateLimitDelay } from './google/shared.ts';
import { validateCalendarConfig } from './googleCalendar/config.ts';

export { CALENDAR_API_BASE } from './googleCalendar/api.ts';

/**
 * Google Calendar events in a window around today as JSON, with optional daily agendas
 * (spec 4.7), pull only (read-only scope). Quota answers (429, 403 rateLimitExceeded) wait as Google asks.
 */
export const googleCalendarConnector: PlatformConnector = {
  spec: {
    provider: 'google-calendar',
    display_name: 'Google Calendar',
    description:
      'Events of chosen calendars from days_back days ago to days_ahead days ahead, one JSON node per event (the event as Google gives it) at <calendar>/<start date> <summary>.json; optionally a Markdown agenda per day (Agenda/<date>.md). Recurring events as their instances; cancelled events removed.',
    auth: {
      type: 'oauth',
      description: 'Google OAuth (read-only Calendar access, and the account\'s email address to name the connection).',
      scopes: GOOGLE_SCOPES['google-calendar'],
      personal_token: false,
    },
    capabilities: { pull: true, push: { create: false, update: false, delete: false }, incremental: true, webhooks: false },
    sync_modes: ['manual', 'interval'],
    default_sync_mode: 'manual',
    directions: ['pull'],
    config_fields: [
      { name: 'path', type: 'path', required: true, description: 'Project folder the events are written to (one folder per calendar).' },
      { name: 'calendar_ids', type: 'string_list', required: false, description: 'Calendar ids: primary (the default), an email address, or the id in the calendar\'s settings (…@group.calendar.google.com).' },
      { name: 'days_back', type: 'integer', required: false, description: 'Days before today whose events are kept (default 30).' },
      { name: 'days_ahead', type: 'integer', required: false, description: 'Days after today whose events are kept (default 90).' },
      { name: 'agenda', type: 'boolean', required: false, description: 'Also write a Markdown agenda per day with events, Agenda/<date>.md (default false).' },
    ],
  },

  authHeaders: googleAuthHeaders,
  rateLimitDelay: googleRateLimitDelay,
  validateConfig: validateCalendarConfig,
  pull: lazyPull(() => import('./googleCalendar/pull.ts'), (m) => m.pullGoogleCalendar),
};
