/**
 * A record kept on a connection (an agent, an MCP or sandbox endpoint) as a `resource` check
 * takes it: the record itself, with its connection's project beside it (null stays null: "not found").
 */
export function onConnection<T extends { connection: { project_id: string } }>(record: T | null): (T & { project_id: string }) | null {
  return record && { ...record, project_id: record.connection.project_id };
}
