import { z } from 'zod';
import { paginationQuery } from '../../http/pagination.ts';
import { pageFields } from '../presenters/page.ts';
import { WEBHOOK_EVENTS } from '../../webhooks/events.ts';

const id = z.string().min(1).max(100);

export const projectParams = z.object({ project_id: id });
export const hookParams = z.object({ project_id: id, hook_id: id });
export const deliveryParams = z.object({ project_id: id, hook_id: id, delivery_id: id });

const url = z.string().min(1).max(2048).describe('where deliveries are POSTed: a public http(s) address (loopback and private ones only when the operator sets CNS_URL_FETCH_ALLOW_PRIVATE)');
const events = z
  .array(z.enum(WEBHOOK_EVENTS, { error: `an event is one of ${WEBHOOK_EVENTS.join(', ')}` }))
  .min(1)
  .max(WEBHOOK_EVENTS.length * 2)
  .describe(`what to be told about: ${WEBHOOK_EVENTS.join(', ')}`);
const pathPrefix = z
  .string()
  .max(1024)
  .describe("only changes at or beneath this folder ('' = the whole project; an access key's hooks default to, and must stay inside, its scope)");
const secret = z.string().min(16, 'a secret has at least 16 characters').max(256);

export const createBody = z
  .object({
    url,
    events,
    path_prefix: pathPrefix.optional(),
    active: z.boolean().optional().describe('false: nothing is queued until it is set true (default true)'),
    secret: secret.optional().describe('the HMAC key of X-Cns-Signature-256; generated when absent. Answered once, never shown again'),
  })
  .strict();

export const updateBody = z
  .object({
    url: url.optional(),
    events: events.optional(),
    path_prefix: pathPrefix.optional(),
    active: z.boolean().optional().describe('true also switches a disabled hook back on (what happened while it was off is not sent)'),
    secret: secret.nullable().optional().describe('a new secret; null generates one. Answered once'),
  })
  .strict()
  .refine((b) => Object.values(b).some((v) => v !== undefined), { message: 'name at least one of url, events, path_prefix, active, secret', path: ['body'] });

export const listQuery = z
  .object({ recent: z.coerce.number().int().min(0).max(20).default(0).describe('with each hook, its latest deliveries (at most 20)') })
  .strict();

export const deliveriesQuery = paginationQuery.extend({ status: z.enum(['pending', 'delivered', 'failed']).optional() }).strict();

export const deliverySchema = z.object({
  id: z.string(),
  hook_id: z.string(),
  event: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  project_version: z.number().int().nullable(),
  redelivery_of: z.string().nullable(),
  created_at: z.string(),
  first_attempt_at: z.string().nullable(),
  last_attempt_at: z.string().nullable(),
  next_attempt_at: z.string().nullable().describe('pending: when it is attempted next'),
  duration_ms: z.number().int().nullable(),
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  request: z.object({ headers: z.record(z.string(), z.string()), body: z.unknown() }).describe('what was sent (the signature header is computed from the secret at each attempt)'),
  response: z.object({ status: z.number().int().nullable(), body: z.string().nullable().describe('the first 4 KB') }),
});

export const hookSchema = z.object({
  id: z.string(),
  project_id: z.string(),
  url: z.string().describe('without userinfo, the query shown as ?[redacted]'),
  events: z.array(z.string()),
  path_prefix: z.string(),
  active: z.boolean(),
  state: z.enum(['active', 'inactive', 'disabled']).describe('disabled: switched off by the service (disabled_reason), until set active again'),
  disabled_at: z.string().nullable(),
  disabled_reason: z.string().nullable().describe('failing (deliveries failed for CNS_WEBHOOK_DISABLE_AFTER_S in a row) or creator_access_ended'),
  failing_since: z.string().nullable(),
  created_by: z.object({ type: z.enum(['user', 'key']), id: z.string() }).describe('the principal the hook acts as: it is sent only what this one may read'),
  pending_deliveries: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  recent_deliveries: z.array(deliverySchema).optional(),
});

export const hookWithSecret = hookSchema.extend({ secret: z.string().nullable().describe('the signing secret: only in the answer that set it') });
export const hookList = z.object({ webhooks: z.array(hookSchema), total: z.number().int() });
export const deliveryList = z.object({ deliveries: z.array(deliverySchema), ...pageFields });
export const hookDeleted = z.object({ id: z.string(), deleted: z.literal(true) });
