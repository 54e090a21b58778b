import { KeyedLock } from '../../util/keyedLock.ts';
import type { Principal } from '../../auth/principal.ts';
import type { ContentStore, NodeInfo } from '../../content/contentStore.ts';
import { EncodedJson } from '../../content/encodedJson.ts';
import { Lru } from '../../content/lru.ts';
import { normalizeTargetPath } from '../../content/paths.ts';
import { DomainError, invalidField } from '../../errors/domainError.ts';
import type { ProjectRecord } from '../../domain/projects/projectRecord.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import type { ContentAccess, ContentGrant } from '../../policies/contentAccess.ts';
import { isContainer, parsePointer, resolveTokens } from '../../util/jsonPointer.ts';
import { appendAt, putAt, removeAt, type Edit } from './edits.ts';
import { SchemaValidator } from './schemaValidator.ts';
import type { TableRecord, TableStore } from './tableStore.ts';

export interface TablesDeps {
  store: TableStore;
  content: ContentStore;
  access: ContentAccess;
  /** Listing an organization's tables needs a role in it. */
  authorizer: Pick<Authorizer, 'requireOrg'>;
  projects: { find(id: string): Promise<ProjectRecord | undefined> };
}

/** A table with what its answers show besides the record: its organization and its node as it is now (null: permanently deleted). */
export interface TableView {
  table: TableRecord;
  orgId: string;
  node: NodeInfo | null;
}

export interface NewTable {
  name: string;
  path?: string;
  description?: string;
  data?: unknown;
  jsonSchema?: Record<string, unknown>;
}

/** What a data change did. */
export interface DataChange {
  view: TableView;
  /** The member that changed (`-` and appends resolved to the index they took). */
  pointer: string;
  created: boolean;
  changed: boolean;
  projectVersion: number | null;
}

interface CachedDocument {
  blobId: string;
  doc: unknown;
  encoded?: EncodedJson;
}

/** A table found for a caller: the record, the caller's grant on its project, its node (null when gone). */
interface Reach {
  table: TableRecord;
  grant: ContentGrant;
  node: NodeInfo | null;
}

/** Parsed documents kept by table node: at most this many bytes of JSON text (the parsed form is a few times larger). */
const CACHED_DOCUMENT_BYTES = 24 * 1024 * 1024;
/** A change without base_version that loses a race with another writer of the node is rebuilt on the new version this many times. */
const REBUILDS = 3;

/** The pointer of a table request: `''` and `/` are the whole table (spec 4.5 "default /"), anything else RFC 6901. */
const tableTokens = (pointer: string | undefined, field: string): string[] =>
  pointer === undefined || pointer === '' || pointer === '/' ? [] : parsePointer(pointer, field);

const tableNotFound = () => new DomainError('NOT_FOUND', 'Table not found.');

/** The trailer line of a table's delete commit: a record left by a crash after it is known deleted. */
export const tableDeleteTrailer = (tableId: string): string => `Cns-Table-Delete: ${tableId}`;

/**
 * Tables (spec 4.5): a json node plus a record. Data changes are read-modify-write of the whole
 * node as ONE version through `ContentStore.updateNode` (actor the caller), so history, diff and
 * rollback of the node are the table's; changes of one table run one at a time, and a change
 * given `base_version` is refused (409) unless the node is still at that version. Access is the
 * content-access policy on the node's path, wherever the node has moved: the caller's grant on
 * the table's project comes from the route's check, and the node is checked here under it.
 */
export class Tables {
  private readonly validator = new SchemaValidator();
  private readonly lock = new KeyedLock();
  /**
   * The parsed document of a table node at one blob; edits copy, never change it, so readers can
   * share it. After a change it also keeps the stored bytes, so the next change re-encodes only
   * the member it touches.
   */
  private readonly docs = new Lru<string, CachedDocument>(64, CACHED_DOCUMENT_BYTES);
  /** Tables whose node is in the trash at a commit that is not their delete (`<table> <commit>`): not read again. */
  private readonly kept = new Set<string>();

  constructor(private readonly d: TablesDeps) {}

  async listForProject(principal: Principal, projectId: string): Promise<TableView[]> {
    const g = await this.d.access.grant(principal, projectId, 'content:read');
    const out: TableView[] = [];
    for (const t of await this.d.store.listByProject(projectId)) out.push(...(await this.visible(g, t)));
    return out;
  }

  async listForOrg(principal: Principal, orgId: string): Promise<TableView[]> {
    if (principal.kind === 'user') await this.d.authorizer.requireOrg(principal, orgId, 'org:read');
    const grants = new Map<string, ContentGrant | null>();
    const out: TableView[] = [];
    for (const t of await this.d.store.listByOrg(orgId)) {
      if (!grants.has(t.project_id)) {
        try {
          grants.set(t.project_id, await this.d.access.grant(principal, t.project_id, 'content:read'));
        } catch {
          grants.set(t.project_id, null);
        }
      }
      const g = grants.get(t.project_id);
      if (g) out.push(...(await this.visible(g, t)));
    }
    return out;
  }

  /** The record by id, whoever asks (a route's check is made on its project); null for a table deleted. */
  async find(id: string): Promise<TableRecord | null> {
    const table = await this.d.store.find(id);
    return table && !(await this.deletedBefore(table, this.nodeOf(table))) ? table : null;
  }

  async get(g: ContentGrant, id: string): Promise<TableView> {
    const r = await this.reach(g, id);
    return await this.view(r.table, r.node);
  }

  /**
   * Creates the node (which must not exist yet) with the initial data as one version, then the
   * record. `g` is content:write on the project with `tablePath(input)` in its scope.
   */
  async create(g: ContentGrant, input: NewTable): Promise<TableView> {
    const path = tablePath(input);
    const data = input.data === undefined ? [] : input.data;
    if (!isContainer(data)) throw invalidField('data', 'a table holds an object or an array');
    if (input.jsonSchema) {
      this.validator.compile(input.jsonSchema);
      this.validator.validate(input.jsonSchema, data, 'data', 'The initial data does not match the JSON Schema');
    }
    const taken = () => new DomainError('CONFLICT', `Something is already at ${path}: give the table another path.`, { path });
    if (this.d.content.findByPath(g.projectId, path)) throw taken();
    const written = await this.d.content
      .write(g.projectId, g.actor, { path, type: 'json', content: data, baseVersion: 0, message: `create table ${input.name}` })
      .catch((e: unknown) => {
        throw (e as { code?: string }).code === 'CONFLICT' && this.d.content.findByPath(g.projectId, path) ? taken() : e;
      });
    this.remember(written.node, data);
    const table = await this.d.store.create({
      project_id: g.projectId,
      node_id: written.node.id,
      name: input.name,
      description: input.description ?? '',
      json_schema: input.jsonSchema ?? null,
      path,
      created_by: g.principal.id,
    });
    return await this.view(table, written.node);
  }

  /** Name, description and schema; a new schema must accept the data as it is (422 with its errors otherwise). */
  async update(g: ContentGrant, id: string, changes: { name?: string; description?: string; jsonSchema?: Record<string, unknown> | null }): Promise<TableView> {
    return this.lock.run(id, async () => {
      const r = await this.reach(g, id);
      if (changes.jsonSchema) {
        this.validator.compile(changes.jsonSchema);
        const { doc } = await this.document(this.live(r));
        this.validator.validate(changes.jsonSchema, doc, 'json_schema', "The table's data does not match the new JSON Schema");
      }
      const table = await this.d.store.update(r.table.id, { name: changes.name, description: changes.description, json_schema: changes.jsonSchema });
      if (!table) throw tableNotFound();
      return this.view(table, r.node);
    });
  }

  /**
   * Deletes the table: a live node goes to the trash (one version, restorable), its commit naming
   * the table, then the record goes. A crash between the two leaves a record whose node the
   * table's own delete trashed: every read treats it as deleted and removes it (deletedBefore).
   */
  async delete(g: ContentGrant, id: string): Promise<{ trashed: NodeInfo | null }> {
    return this.lock.run(id, async () => {
      const r = await this.reach(g, id);
      const node = r.node;
      if (!node || node.state !== 'active') {
        await this.d.store.delete(r.table.id);
        return { trashed: null };
      }
      const result = await this.d.content.remove(node.projectId, r.grant.actor, node.path, {
        message: `delete table ${r.table.name}`,
        trailers: [tableDeleteTrailer(r.table.id)],
        // A node that moved meanwhile is a conflict: nothing is deleted.
        guard: () => {
          const now = this.d.content.findById(node.id);
          if (!now || now.state !== 'active' || now.path !== node.path) throw new DomainError('CONFLICT', "The table's node changed while it was being deleted; try again.", { node_id: node.id });
        },
      });
      this.docs.delete(node.id);
      // The table is deleted once its node is (reads remove a record left behind): a failure here changes nothing for the caller.
      await this.d.store.delete(r.table.id).catch(() => {});
      return { trashed: result.nodes.find((n) => n.id === node.id) ?? null };
    });
  }

  /** The value at a pointer, with the version it was read at. */
  async read(g: ContentGrant, id: string, pointer: string | undefined): Promise<{ view: TableView; pointer: string; value: unknown }> {
    const r = await this.reach(g, id);
    const tokens = tableTokens(pointer, 'path');
    const { doc, node } = await this.document(this.live(r));
    return { view: await this.view(r.table, node), pointer: pointerOf(pointer), value: resolveTokens(doc, tokens, 'path') };
  }

  /** PUT: replace or create the member at `pointer`. */
  put(g: ContentGrant, id: string, pointer: string | undefined, value: unknown, baseVersion?: number): Promise<DataChange> {
    const tokens = tableTokens(pointer, 'path');
    return this.change(g, id, baseVersion, `put ${pointerOf(pointer)}`, 'value', (doc) => putAt(doc, tokens, value, 'path'));
  }

  /** POST: append to the array at `pointer`, or merge keys into the object there. */
  append(g: ContentGrant, id: string, pointer: string | undefined, data: unknown, baseVersion?: number): Promise<DataChange> {
    const tokens = tableTokens(pointer, 'path');
    return this.change(g, id, baseVersion, `append to ${pointerOf(pointer)}`, 'data', (doc) => appendAt(doc, tokens, data, 'path', 'data'));
  }

  /** DELETE: remove the member at `pointer`. */
  remove(g: ContentGrant, id: string, pointer: string | undefined, baseVersion?: number): Promise<DataChange> {
    const tokens = tableTokens(pointer, 'path');
    return this.change(g, id, baseVersion, `delete ${pointerOf(pointer)}`, 'path', (doc) => removeAt(doc, tokens, 'path'));
  }

  /**
   * One data change as one version of the node. Without `baseVersion` the change is built on the
   * version read and written only if the node is still at it; if another writer (the content API,
   * a sync) got in between, it is rebuilt on the new version.
   */
  private change(g: ContentGrant, id: string, baseVersion: number | undefined, what: string, field: string, edit: (doc: unknown) => Edit): Promise<DataChange> {
    return this.lock.run(id, async () => {
      for (let attempt = 0; ; attempt++) {
        const r = await this.reach(g, id);
        const { doc, node, encoded } = await this.document(this.live(r));
        if (baseVersion !== undefined && baseVersion !== node.version) {
          throw new DomainError('CONFLICT', `The table changed: it is at version ${node.version}, not ${baseVersion}. Read it again and retry.`, { base_version: baseVersion, version: node.version });
        }
        const e = edit(doc);
        if (r.table.json_schema) this.validator.validate(r.table.json_schema, e.doc, field, "The change does not match the table's JSON Schema");
        try {
          const content = e.within.length === 0 ? EncodedJson.of(e.doc as object) : (encoded ?? EncodedJson.of(doc as object)).replaced(e.within, e.doc as object);
          const w = await this.d.content.updateNode(node.projectId, r.grant.actor, node.id, { content, baseVersion: node.version, message: `table ${r.table.name}: ${what}` });
          this.remember(w.node, e.doc, content);
          return { view: await this.view(r.table, w.node), pointer: e.pointer, created: e.created, changed: w.changed, projectVersion: w.projectVersion };
        } catch (err) {
          if (baseVersion === undefined && (err as { code?: string }).code === 'CONFLICT' && attempt < REBUILDS) continue;
          throw err;
        }
      }
    });
  }

  /**
   * The table as it is now (found again: a change waits for the table's lock) under `grant`, a
   * grant on its project: gone is 404; a node outside a key's scope 403.
   */
  private async reach(grant: ContentGrant, id: string): Promise<Reach> {
    const table = await this.d.store.find(id);
    if (!table || table.project_id !== grant.projectId) throw tableNotFound();
    const node = this.nodeOf(table);
    if (await this.deletedBefore(table, node)) throw tableNotFound();
    if (node) this.d.access.requireNode(grant, node);
    else this.d.access.requirePath(grant, table.path);
    return { table, grant, node };
  }

  /** The node of a table whose data can be used: gone is 404, in the trash (or no longer json) is 409, each saying what to do. */
  private live(r: Reach): NodeInfo {
    const { table, node } = r;
    if (!node) {
      throw new DomainError('NOT_FOUND', `The table's data is gone: its node (created at ${table.path}) was permanently deleted. Delete the table.`, { table_id: table.id, node_id: table.node_id });
    }
    if (node.state !== 'active') {
      throw new DomainError('CONFLICT', `The table's node is in the trash (deleted from ${node.originalPath ?? table.path}): restore it to use the table again, or delete the table.`, { table_id: table.id, node_id: node.id });
    }
    if (node.type !== 'json') throw new DomainError('CONFLICT', `The table's node ${node.path} is no longer a JSON node.`, { table_id: table.id, node_id: node.id });
    return node;
  }

  /** The parsed document of a live node and the node it was read from (parsed once per version). */
  private async document(node: NodeInfo): Promise<{ doc: unknown; node: NodeInfo; encoded?: EncodedJson }> {
    const hit = this.docs.get(node.id);
    if (hit && hit.blobId === node.contentHash) return { doc: hit.doc, node, encoded: hit.encoded };
    const read = await this.d.content.readValue(node.projectId, { id: node.id });
    this.remember(read.node, read.value);
    return { doc: read.value, node: read.node };
  }

  private remember(node: NodeInfo, doc: unknown, encoded?: EncodedJson): void {
    // Only bytes that are what the node stores may seed the next splice.
    const same = encoded && node.size === encoded.bytes.length ? encoded : undefined;
    if (node.contentHash) this.docs.set(node.id, { blobId: node.contentHash, doc, encoded: same }, node.size * (same ? 2 : 1));
  }

  /** The table's node as it is now; null when it is permanently gone. */
  private nodeOf(table: TableRecord): NodeInfo | null {
    const found = this.d.content.findById(table.node_id);
    return found && found.projectId === table.project_id ? found : null;
  }

  /**
   * Whether the table was deleted and only its record is left (its delete stopped between the
   * node's commit and the record): its node is in the trash by a commit naming the table. Such
   * a record is removed now. A node trashed otherwise (through the content API) keeps its table.
   */
  private async deletedBefore(table: TableRecord, node: NodeInfo | null): Promise<boolean> {
    if (!node || node.state === 'active') return false;
    const { commitId } = this.d.content.getVersion(node.projectId, { id: node.id }, node.version);
    const seen = `${table.id} ${commitId}`;
    if (this.kept.has(seen)) return false;
    if (!(await this.d.content.commitTrailers(node.projectId, commitId)).includes(tableDeleteTrailer(table.id))) {
      if (this.kept.size >= 10_000) this.kept.clear();
      this.kept.add(seen);
      return false;
    }
    await this.d.store.delete(table.id);
    return true;
  }

  /** The table if the grant reaches its node (or, for a node that is gone, the path it was created at). */
  private async visible(g: ContentGrant, table: TableRecord): Promise<TableView[]> {
    const node = this.nodeOf(table);
    if (await this.deletedBefore(table, node)) return [];
    const reachable = node ? this.d.access.mayNode(g, node) : this.d.access.mayPath(g, table.path);
    return reachable ? [await this.view(table, node)] : [];
  }

  private async view(table: TableRecord, node: NodeInfo | null): Promise<TableView> {
    return { table, orgId: (await this.d.projects.find(table.project_id))?.org_id ?? '', node };
  }
}

/** The pointer as answers show it ('' for the whole table). */
const pointerOf = (pointer: string | undefined) => (pointer === undefined || pointer === '/' ? '' : pointer);

/** Where a new table's node goes: the path given, else `tables/<slug>.json` (422 naming `path` when it is not one). */
export function tablePath(input: { name: string; path?: string }): string {
  return normalizeTargetPath(input.path ?? defaultPath(input.name), 'path');
}

/** `tables/<slug>.json`: the name in lower case, runs of other characters as one dash. */
export function defaultPath(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return `tables/${slug || 'table'}.json`;
}
