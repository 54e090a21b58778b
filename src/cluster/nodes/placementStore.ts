import type { MetadataDb } from '../../db/metadata/metadataStore.ts';

/** Where a project lives: the node that writes it (null while a failover elects one), the epoch it writes under, and every node holding a copy. */
export interface Placement {
  project: string;
  epoch: number;
  primary: string | null;
  state: 'ok' | 'electing';
  copies: string[];
}

/**
 * The placement rows in PostgreSQL (migration 033). Rows change only by compare-and-swap on the
 * epoch and state, so two coordinators (one of which lost its lease mid-step) cannot both commit
 * a failover, and epochs only grow.
 */
export class PlacementStore {
  constructor(private readonly db: MetadataDb) {}

  async get(project: string): Promise<Placement | null> {
    const row = await this.db.selectFrom('project_placement').selectAll().where('project_id', '=', project).executeTakeFirst();
    if (!row) return null;
    const copies = await this.db.selectFrom('project_copies').select('node_id').where('project_id', '=', project).orderBy('node_id').execute();
    return { project, epoch: Number(row.epoch), primary: row.primary_node, state: row.state, copies: copies.map((c) => c.node_id) };
  }

  /** Whether the project exists (its row; the placement rows go with it). */
  async exists(project: string): Promise<boolean> {
    return (await this.db.selectFrom('projects').select('id').where('id', '=', project).executeTakeFirst()) !== undefined;
  }

  /**
   * Places a project that has no placement yet: `primary` writes it at epoch 1, `copies` (the
   * primary among them) hold it. The first caller wins; every caller gets the stored placement.
   * Null when the project does not exist (deleted meanwhile).
   */
  async claim(project: string, primary: string, copies: readonly string[]): Promise<Placement | null> {
    if (!(await this.exists(project))) return null;
    await this.db.transaction().execute(async (trx) => {
      const placed = await trx.insertInto('project_placement').values({ project_id: project, epoch: 1, primary_node: primary, state: 'ok' }).onConflict((oc) => oc.column('project_id').doNothing()).executeTakeFirst();
      if (Number(placed.numInsertedOrUpdatedRows ?? 0) === 0) return;
      await trx.insertInto('project_copies').values([...new Set([primary, ...copies])].map((node_id) => ({ project_id: project, node_id }))).onConflict((oc) => oc.doNothing()).execute();
    });
    return this.get(project);
  }

  /** More nodes hold a copy from now on (a placement short of copies, filled from the live nodes). */
  async addCopies(project: string, nodes: readonly string[]): Promise<void> {
    if (nodes.length === 0) return;
    await this.db.insertInto('project_copies').values(nodes.map((node_id) => ({ project_id: project, node_id }))).onConflict((oc) => oc.doNothing()).execute();
  }

  /** Copies on nodes gone for good are replaced: `gone` leave the project's copies, `added` join them, in one transaction. */
  async replaceCopies(project: string, gone: readonly string[], added: readonly string[]): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      if (gone.length > 0) await trx.deleteFrom('project_copies').where('project_id', '=', project).where('node_id', 'in', [...gone]).execute();
      if (added.length > 0) await trx.insertInto('project_copies').values(added.map((node_id) => ({ project_id: project, node_id }))).onConflict((oc) => oc.doNothing()).execute();
    });
  }

  /** Projects whose primary is one of `nodes`, or that a failover left electing. */
  async needingPrimary(nodes: readonly string[]): Promise<{ project: string; epoch: number; state: 'ok' | 'electing' }[]> {
    let q = this.db.selectFrom('project_placement').select(['project_id', 'epoch', 'state']).where('state', '=', 'electing');
    if (nodes.length > 0) q = this.db.selectFrom('project_placement').select(['project_id', 'epoch', 'state']).where((eb) => eb.or([eb('state', '=', 'electing'), eb('primary_node', 'in', [...nodes])]));
    const rows = await q.orderBy('project_id').execute();
    return rows.map((r) => ({ project: r.project_id, epoch: Number(r.epoch), state: r.state }));
  }

  /** Step 1 of a failover: epoch E becomes E+1 with no primary; false when another coordinator moved it first. */
  async reserve(project: string, epoch: number): Promise<boolean> {
    const r = await this.db.updateTable('project_placement').set({ epoch: epoch + 1, state: 'electing', primary_node: null }).where('project_id', '=', project).where('epoch', '=', epoch).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Step 4 of a failover: the chosen copy is the primary of the reserved epoch; false when the epoch moved on. */
  async commit(project: string, epoch: number, primary: string): Promise<boolean> {
    const r = await this.db.updateTable('project_placement').set({ primary_node: primary, state: 'ok' }).where('project_id', '=', project).where('epoch', '=', epoch).where('state', '=', 'electing').executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * A move's last step: `node` no longer holds a copy. Only while the placement is settled (not
   * electing) and `node` does not write the project; false otherwise (nothing changed).
   */
  async removeCopy(project: string, node: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('project_copies')
      .where('project_id', '=', project)
      .where('node_id', '=', node)
      .where((eb) => eb.exists(eb.selectFrom('project_placement').select('project_id').where('project_id', '=', project).where('state', '=', 'ok').where('primary_node', '<>', node)))
      .executeTakeFirst();
    return Number(r.numDeletedRows) === 1;
  }

  /** A planned switchover's first step: like reserve, only while `primary` writes the project at `epoch` and no election runs. */
  async reserveFrom(project: string, epoch: number, primary: string): Promise<boolean> {
    const r = await this.db.updateTable('project_placement').set({ epoch: epoch + 1, state: 'electing', primary_node: null }).where('project_id', '=', project).where('epoch', '=', epoch).where('state', '=', 'ok').where('primary_node', '=', primary).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** The projects `node` holds a copy of (a drain's work list), primaries last so that replicas leave first. */
  async heldBy(node: string): Promise<string[]> {
    const rows = await this.db.selectFrom('project_copies').innerJoin('project_placement', 'project_placement.project_id', 'project_copies.project_id').select(['project_copies.project_id as project', 'project_placement.primary_node as primary']).where('project_copies.node_id', '=', node).orderBy('project_copies.project_id').execute();
    return rows.sort((a, b) => Number(a.primary === node) - Number(b.primary === node)).map((r) => r.project);
  }

  /** How many projects each node holds, as primary and in all (the cluster listing). */
  async heldByNode(): Promise<Map<string, { primary: number; copies: number }>> {
    const copies = await this.db.selectFrom('project_copies').select(['node_id']).select((eb) => eb.fn.countAll<number>().as('n')).groupBy('node_id').execute();
    const primaries = await this.db.selectFrom('project_placement').select(['primary_node']).select((eb) => eb.fn.countAll<number>().as('n')).where('primary_node', 'is not', null).groupBy('primary_node').execute();
    const out = new Map<string, { primary: number; copies: number }>();
    for (const c of copies) out.set(c.node_id, { primary: 0, copies: Number(c.n) });
    for (const p of primaries) out.set(p.primary_node!, { primary: Number(p.n), copies: out.get(p.primary_node!)?.copies ?? 0 });
    return out;
  }
}
