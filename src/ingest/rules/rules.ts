import type { ValidateFunction } from 'ajv';
import { InvalidModelRef, ProviderNotConfigured, type ChatProviders } from '../../llm/providers.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import type { ContentAccess, ContentGrant } from '../../policies/contentAccess.ts';
import { extensionOf } from '../converters/names.ts';
import { RuleStore, type RuleMatch, type RuleRecord } from './ruleStore.ts';
import { compileSchema } from './schemaCheck.ts';

export interface NewRuleInput {
  project_id: string;
  name: string;
  description?: string;
  match?: RuleMatch;
  target?: 'markdown' | 'json';
  json_schema?: Record<string, unknown>;
  instructions?: string;
}

const notFound = () => new DomainError('NOT_FOUND', 'Rule not found.');

/**
 * ETL rules (spec 4.10): how a project's files become content. Reading them needs content:read
 * on the project; creating and deleting them content:write over the whole project (a rule
 * applies to every submission of the project, whatever folder it targets). The grant on the
 * project comes from the route's check; that it covers the whole project is checked here.
 *
 * A rule with a JSON Schema has the language model fill it from the converted text; it is
 * refused at creation when the schema does not compile or no provider serves the default model.
 */
export class IngestRules {
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(
    private readonly d: {
      store: RuleStore;
      access: Pick<ContentAccess, 'requireWholeProject'>;
      providers: ChatProviders;
      /** `provider:model` the extraction uses (CNS_DEFAULT_MODEL). */
      model: string;
    },
  ) {}

  /** A rule of the project `g` (content:write) is on. */
  async create(g: ContentGrant, input: Omit<NewRuleInput, 'project_id'>): Promise<RuleRecord> {
    this.d.access.requireWholeProject(g, 'Managing ingest rules');
    const schema = input.json_schema ?? null;
    const target = input.target ?? (schema ? 'json' : 'markdown');
    if (schema && target !== 'json') throw invalidField('target', 'a rule with json_schema writes json: target must be json');
    if (input.instructions !== undefined && !schema) throw invalidField('instructions', 'instructions are for the model that fills json_schema: give json_schema too');
    if (schema) {
      if (schema.type !== 'object' && schema.type !== 'array') throw invalidField('json_schema', 'json_schema must describe an object or an array (type: object or array): a json node holds one');
      compileSchema(schema);
      this.requireProvider();
    }
    return await this.d.store.create({
      project_id: g.projectId,
      name: input.name,
      description: input.description ?? '',
      match: normalizeMatch(input.match ?? {}),
      target,
      json_schema: schema,
      instructions: input.instructions ?? null,
      created_by: g.principal.id,
    });
  }

  async list(projectId: string): Promise<RuleRecord[]> {
    return await this.d.store.listByProject(projectId);
  }

  /** Deletes a rule of the project `g` (content:write) is on. */
  async delete(g: ContentGrant, rule: RuleRecord): Promise<void> {
    if (rule.project_id !== g.projectId) throw notFound();
    this.d.access.requireWholeProject(g, 'Managing ingest rules');
    await this.d.store.delete(rule.id);
    this.validators.delete(rule.id);
  }

  /** A rule a submission names: it must belong to the submission's project (422 otherwise). */
  async forSubmission(projectId: string, ruleId: string): Promise<RuleRecord> {
    const rule = await this.d.store.find(ruleId);
    if (!rule || rule.project_id !== projectId) throw invalidField('rule_id', `no rule ${ruleId} in this project`);
    return rule;
  }

  /** The rule as it is now, whoever asks (a task runs after its submission, and the rule may be gone; a route's check is made on its project). */
  async find(id: string): Promise<RuleRecord | null> {
    return await this.d.store.find(id);
  }

  /**
   * The first of the project's rules, in creation order, whose `match` names the file's extension
   * or its media type (`type/*` matches every subtype); a rule with an empty match applies only
   * when a submission names it.
   */
  async match(projectId: string, name: string, mimeType: string | null): Promise<RuleRecord | null> {
    const ext = extensionOf(name);
    const mime = mimeType?.split(';')[0]!.trim().toLowerCase() ?? '';
    for (const rule of await this.d.store.listByProject(projectId)) {
      if (ext && rule.match.extensions?.includes(ext)) return rule;
      if (mime && rule.match.mime_types?.some((m) => m === mime || (m.endsWith('/*') && mime.startsWith(m.slice(0, -1))))) return rule;
    }
    return null;
  }

  validator(rule: RuleRecord): ValidateFunction {
    let v = this.validators.get(rule.id);
    if (!v) {
      v = compileSchema(rule.json_schema!);
      this.validators.set(rule.id, v);
    }
    return v;
  }

  /** 422 naming the setting when the default model has no configured provider. */
  private requireProvider(): void {
    try {
      this.d.providers.resolve(this.d.model);
    } catch (e) {
      if (e instanceof ProviderNotConfigured) {
        throw invalidField('json_schema', `a rule with json_schema needs a language model, and ${e.message} (the model is CNS_DEFAULT_MODEL=${this.d.model})`);
      }
      if (e instanceof InvalidModelRef) throw invalidField('json_schema', `a rule with json_schema needs a language model, and CNS_DEFAULT_MODEL is not one: ${e.message}`);
      throw e;
    }
  }
}

function normalizeMatch(m: RuleMatch): RuleMatch {
  const out: RuleMatch = {};
  if (m.extensions) out.extensions = [...new Set(m.extensions.map((e) => e.trim().replace(/^\.+/, '').toLowerCase()).filter(Boolean))];
  if (m.mime_types) out.mime_types = [...new Set(m.mime_types.map((t) => t.trim().toLowerCase()).filter(Boolean))];
  return out;
}
