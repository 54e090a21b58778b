import type { ChatProviders } from '../../llm/providers.ts';
import type { ConversionLimits, ConvertOutput, IngestMode, Progress } from '../converters/converter.ts';
import { outputName } from '../converters/names.ts';
import type { ConversionPool } from '../worker/conversionPool.ts';
import { extractJson } from '../rules/extract.ts';
import type { RuleRecord } from '../rules/ruleStore.ts';
import type { IngestRules } from '../rules/rules.ts';
import { TaskFailure } from './taskFailure.ts';
import type { TaskRecord } from './taskTypes.ts';

/** One source a task converts: its uploaded file, or one fetched page. */
export interface Source {
  file: string;
  /** Decides the format (by extension) and names the output. */
  name: string;
  mimeType: string | null;
  sourceUrl?: string;
}

export interface SourceConverterDeps {
  pool: ConversionPool;
  rules: IngestRules;
  providers: ChatProviders;
  /** `provider:model` of schema rules (CNS_DEFAULT_MODEL). */
  model: string;
  limits: ConversionLimits;
}

/**
 * Turns one source into nodes the way its task asks: the rule it names, else (when it names
 * neither a rule nor a mode) the first of the project's rules that matches the source, else
 * the mode, else each format's default (Markdown for text, JSON rows plus a preview for tables). Conversion runs in the pool, off the event loop; a rule
 * with a JSON Schema then has the language model extract one json node from the converted text.
 */
export class SourceConverter {
  constructor(private readonly d: SourceConverterDeps) {}

  async convert(task: TaskRecord, source: Source, signal: AbortSignal, onProgress: (p: Progress) => void): Promise<ConvertOutput> {
    const rule = await this.ruleFor(task, source);
    // A schema rule reads the text; a plain rule says which of markdown or json to write; neither: the format's default.
    const mode: IngestMode | null = rule?.json_schema ? 'markdown' : (task.mode ?? rule?.target ?? null);
    const out = await this.d.pool.run(
      { file: source.file, name: source.name, mimeType: source.mimeType ?? undefined, mode, limits: this.d.limits, sourceUrl: source.sourceUrl },
      { signal, onProgress },
    );
    if (!rule?.json_schema) return out;
    const text = out.nodes
      .map((n) => (n.type === 'markdown' ? n.content : n.type === 'json' ? JSON.stringify(n.content, null, 2) : ''))
      .join('\n\n')
      .trim();
    if (text === '') throw new TaskFailure('no_text', `${source.name} has no text for rule "${rule.name}" to extract from`);
    const { provider, model } = this.d.providers.resolve(this.d.model);
    const { value, warnings } = await extractJson({
      provider,
      model,
      schema: rule.json_schema,
      validate: this.d.rules.validator(rule),
      instructions: rule.instructions,
      text,
      source: source.name,
      signal,
    });
    return { nodes: [{ name: outputName(source.name, 'json'), type: 'json', content: value }], warnings: [...out.warnings, ...warnings] };
  }

  private async ruleFor(task: TaskRecord, source: Source): Promise<RuleRecord | null> {
    if (task.rule_id) {
      const rule = await this.d.rules.find(task.rule_id);
      if (!rule) throw new TaskFailure('rule_deleted', `the rule ${task.rule_id} this task names was deleted`);
      return rule;
    }
    return task.mode === null ? await this.d.rules.match(task.project_id, source.name, source.mimeType) : null;
  }
}
