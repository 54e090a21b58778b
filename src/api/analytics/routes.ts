import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import { MAX_POINTS, type UsageReports } from '../../analytics/usageReports.ts';
import * as schema from './schemas.ts';

const DAY_MS = 24 * 3600 * 1000;

/** `to` defaults to now and `from` to a day before `to`. */
const rangeOf = (q: { from?: string; to?: string }) => {
  const to = q.to === undefined ? Date.now() : Date.parse(q.to);
  return { from: q.from === undefined ? to - DAY_MS : Date.parse(q.from), to };
};

const permissionNote =
  'Needs project:read. The figures follow the content-access policy: a caller who reads the whole project sees every count; a key limited to a folder (or one that reads no content) sees only the accesses of the nodes it may read (its totals, series and rankings leave out the rest of the project and calls that named no node). Connection names need keys:manage, as listing connections does.';

/**
 * Usage analytics (spec 4.10): public views of publishes and authenticated API calls, counted in
 * per-minute aggregates (src/analytics/). Nothing is counted when CNS_ANALYTICS=false.
 */
export function analyticsRoutes(s: { analytics: { reports: UsageReports } }): RouteGroup {
  const reports = () => s.analytics.reports;
  return {
    prefix: '/analytics',
    tag: 'Analytics',
    routes: [
      route({
        method: 'get',
        path: '/access-timeseries',
        summary: "A project's views, API calls and unique visitors per minute, hour or day",
        description: `Every bucket of the range is a point (zeros where nothing happened); at most ${MAX_POINTS} points (422 beyond: choose a larger interval). Visitors are public viewers: a filter on a connection has none. ${permissionNote}`,
        permission: 'project:read',
        authorize: { project: ({ query }) => query.project_id },
        query: schema.timeseriesQuery,
        response: schema.timeseriesAnswer,
        async handle(ctx, { query, access }) {
          // What the caller sees of nodes and connections inside the project is the reports' finer check.
          const series = await reports().timeseries(access.principal, {
            projectId: query.project_id,
            ...rangeOf(query),
            interval: query.interval,
            publishId: query.publish_id,
            connectionId: query.connection_id,
            nodeId: query.node_id,
          });
          ok(ctx, { project_id: query.project_id, ...series });
        },
      }),
      route({
        method: 'get',
        path: '/access-summary',
        summary: "A project's totals and its most used publishes, nodes and connections over a range",
        description: permissionNote,
        permission: 'project:read',
        authorize: { project: ({ query }) => query.project_id },
        query: schema.summaryQuery,
        response: schema.summaryAnswer,
        async handle(ctx, { query, access }) {
          const summary = await reports().summary(access.principal, { projectId: query.project_id, ...rangeOf(query), limit: query.limit });
          ok(ctx, { project_id: query.project_id, ...summary });
        },
      }),
    ],
  };
}
