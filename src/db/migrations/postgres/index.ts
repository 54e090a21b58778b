import type { Migration } from '../../migrate.ts';
import { postgresInitialMigration } from './030_initial.ts';
import { postgresClusterMigration } from './031_cluster.ts';
import { postgresNodeOwnerMigration } from './032_node_owner.ts';
import { postgresPlacementMigration } from './033_placement.ts';

/** The PostgreSQL store's migrations, in order; numbered after the SQLite ones they start from. */
export const postgresMigrations: Migration[] = [postgresInitialMigration, postgresClusterMigration, postgresNodeOwnerMigration, postgresPlacementMigration];
