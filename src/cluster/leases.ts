import type { Db } from '../db/database.ts';
import { statementCache } from '../db/statements.ts';
import { NotOwnerError } from './notOwner.ts';

export interface Lease {
  holder: string;
  epoch: number;
}

/**
 * Project leases in the database (migration 026). A holder is one incarnation of a worker; a
 * lease passes to another holder only when its holder is not among the live ones (the primary
 * says who is alive: it saw the others exit), and the epoch then grows. `fence` runs inside each
 * write transaction of the content core, so a holder that lost its lease cannot index a write.
 */
export class ProjectLeases {
  private readonly sql: ReturnType<typeof statementCache>;

  constructor(
    private readonly db: Db,
    readonly me: string,
  ) {
    this.sql = statementCache(db);
  }

  read(projectId: string): Lease | undefined {
    return this.sql('SELECT holder, epoch FROM project_leases WHERE project_id = ?').get(projectId) as Lease | undefined;
  }

  /** Takes the lease unless a live holder other than this one has it; answers who holds it now. */
  take(projectId: string, isLive: (holder: string) => boolean): Lease {
    return this.db
      .transaction((): Lease => {
        const row = this.read(projectId);
        if (row && (row.holder === this.me || isLive(row.holder))) return row;
        const epoch = (row?.epoch ?? 0) + 1;
        this.sql('INSERT INTO project_leases (project_id, holder, epoch, taken_at) VALUES (?, ?, ?, ?) ON CONFLICT(project_id) DO UPDATE SET holder = excluded.holder, epoch = excluded.epoch, taken_at = excluded.taken_at').run(
          projectId,
          this.me,
          epoch,
          new Date().toISOString(),
        );
        return { holder: this.me, epoch };
      })
      .immediate();
  }

  /** How many projects each holder holds now (a worker's share of the box, for /healthz). */
  heldByHolder(): Map<string, number> {
    const rows = this.sql("SELECT holder, count(*) AS n FROM project_leases WHERE holder <> '' GROUP BY holder").all() as { holder: string; n: number }[];
    return new Map(rows.map((r) => [r.holder, r.n]));
  }

  /** Throws unless this holder still holds the project's lease at `epoch` (call inside the write transaction). */
  fence(projectId: string, epoch: number): void {
    const row = this.read(projectId);
    if (!row || row.holder !== this.me || row.epoch !== epoch) throw new NotOwnerError(projectId);
  }

  /**
   * A clean stop gives its leases up (holder '' is nobody), so the next owner need not wait for
   * the primary to declare it gone; the row stays, so the next epoch is still higher.
   */
  releaseAll(): void {
    this.sql("UPDATE project_leases SET holder = '' WHERE holder = ?").run(this.me);
  }
}
