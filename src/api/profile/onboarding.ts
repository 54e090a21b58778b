import type { ContentStore } from '../../content/contentStore.ts';
import type { AccessConnectionStore } from '../../domain/connections/accessConnectionStore.ts';
import type { ConnectionKind } from '../../domain/connections/connectionRecord.ts';
import type { ProjectStore } from '../../domain/projects/projectStore.ts';
import type { ProjectView } from '../../domain/projects/projectView.ts';
import type { UserRecord } from '../../domain/users/userStore.ts';
import type { Authorizer } from '../../policies/authorize.ts';

export type OnboardingStepId = 'project_created' | 'content_added' | 'key_or_agent_created' | 'connected';

export interface OnboardingStep {
  id: OnboardingStepId;
  done: boolean;
  label: string;
  /** When the step was first done, from the state that shows it (the oldest project, first commit, connection). */
  done_at: string | null;
}

export interface OnboardingStatus {
  initialized: boolean;
  initialized_at: string | null;
  steps: OnboardingStep[];
  /** Every step done, or completed explicitly (POST /profile/onboarding/complete). */
  completed: boolean;
  completed_explicitly: boolean;
  /** The explicit completion, else when the last step was done; null while not completed. */
  completed_at: string | null;
}

/** What the steps are computed from. */
export interface OnboardingDeps {
  projects: Pick<ProjectStore, 'listVisible'>;
  content: Pick<ContentStore, 'stats' | 'commitsAfter'>;
  connections: Pick<AccessConnectionStore, 'listByProject'>;
  authorizer: Pick<Authorizer, 'orgRole'>;
}

const PAGE = 500;

/** The oldest of some times (ISO strings compare as times), or null. */
const earliest = (times: (string | null | undefined)[]): string | null =>
  times.reduce<string | null>((min, t) => (t && (min === null || t < min) ? t : min), null);

/**
 * The onboarding steps of a user, computed from what exists now: projects in their
 * organizations, content and connections in the projects they reach (an organization role or a
 * project membership). Nothing is stored but the explicit completion (`users.onboarding_completed_at`).
 */
export async function onboardingStatus(s: OnboardingDeps, user: UserRecord): Promise<OnboardingStatus> {
  const projects: ProjectView[] = [];
  for (let offset = 0; ; offset += PAGE) {
    const page = await s.projects.listVisible(user.id, undefined, { limit: PAGE, offset });
    projects.push(...page.items);
    if (page.items.length < PAGE) break;
  }
  const firstConnection = async (kinds: ConnectionKind[]) =>
    earliest(
      await Promise.all(
        projects.flatMap((p) => kinds.map(async (kind) => (await s.connections.listByProject(p.id, { kind }, { limit: 1, offset: 0 })).items[0]?.created_at)),
      ),
    );
  const firstContent = earliest(
    projects.map((p) => {
      const stats = s.content.stats(p.id);
      const nodes = Object.values(stats.nodesByType).reduce((a, b) => a + b, 0) + stats.trashedCount;
      return nodes > 0 ? (s.content.commitsAfter(p.id, 0, 1)[0]?.createdAt ?? stats.lastChange?.at) : null;
    }),
  );
  // Projects of the organizations the user belongs to (not those reached only as a project member).
  const orgIds = [...new Set(projects.map((p) => p.org_id))];
  const roles = await Promise.all(orgIds.map((id) => s.authorizer.orgRole(user.id, id)));
  const memberOf = new Set(orgIds.filter((_, i) => roles[i] !== null));
  const step = (id: OnboardingStepId, label: string, doneAt: string | null): OnboardingStep => ({ id, done: doneAt !== null, label, done_at: doneAt });
  const steps = [
    step('project_created', 'Create a project', earliest(projects.filter((p) => memberOf.has(p.org_id)).map((p) => p.created_at))),
    step('content_added', 'Add content to a project', firstContent),
    step('key_or_agent_created', 'Create an access key or an agent', await firstConnection(['api', 'agent'])),
    step('connected', 'Connect an MCP endpoint, a sync or a sandbox endpoint', await firstConnection(['mcp', 'sync', 'sandbox'])),
  ];
  const allDone = steps.every((st) => st.done);
  const lastDone = allDone ? steps.map((st) => st.done_at!).reduce((a, b) => (a > b ? a : b)) : null;
  const explicit = user.onboarding_completed_at;
  return {
    initialized: user.initialized_at !== null,
    initialized_at: user.initialized_at,
    steps,
    completed: explicit !== null || allDone,
    completed_explicitly: explicit !== null,
    completed_at: explicit ?? lastDone,
  };
}
