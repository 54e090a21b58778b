import { api } from '../api/client.ts';
import { ConnectionList } from './ConnectionList.tsx';
import { when } from './format.ts';
import { StatusBadge } from './StatusBadge.tsx';
import type { SyncStatus } from './types.ts';
import { useLoad } from './useLoad.ts';

/** The project's syncs at a glance (`GET /sync/status`): state, trigger and the last run. */
export function Syncs({ projectId }: { projectId: string }) {
  const status = useLoad(() => api<SyncStatus>('GET', `/sync/status?project_id=${encodeURIComponent(projectId)}`), [projectId]);
  const list = status.data?.items;
  return (
    <ConnectionList
      id="settings-syncs"
      title="Syncs"
      error={status.error}
      items={list}
      empty="No syncs."
      intro={
        <p>
          {status.data?.active} active, {status.data?.paused} paused.
        </p>
      }
    >
      {(x) => (
        <>
          <p class="connection-title">
            <strong>{x.name}</strong> <StatusBadge status={x.status} detail={x.pause_reason} />
          </p>
          <dl>
            <dt>Source</dt>
            <dd>{x.provider}</dd>
            <dt>Runs</dt>
            <dd>
              {x.trigger_mode}
              {x.next_run_at && `, next ${when(x.next_run_at)}`}
            </dd>
            <dt>Last run</dt>
            <dd>
              {x.last_run ? (
                <>
                  <StatusBadge status={x.last_run.status} /> {when(x.last_run.finished_at ?? x.last_run.started_at)}
                  {x.last_run.errors.length > 0 && `: ${x.last_run.errors[0]}`}
                </>
              ) : (
                'none yet'
              )}
            </dd>
          </dl>
        </>
      )}
    </ConnectionList>
  );
}
