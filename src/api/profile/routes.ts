import { z } from 'zod';
import type { UserInitializer } from '../../domain/users/userInitialization.ts';
import type { UserStore } from '../../domain/users/userStore.ts';
import { ok } from '../../http/envelope.ts';
import { route, type RouteGroup } from '../../http/routes/declaration.ts';
import type { Authorizer } from '../../policies/authorize.ts';
import { organizationSchema, presentOrganization } from '../presenters/organization.ts';
import { presentProject, projectSchema } from '../presenters/project.ts';
import { presentUser, userSchema } from '../presenters/user.ts';
import { onboardingStatus, type OnboardingDeps } from './onboarding.ts';
import { onboardingSchema } from './presenter.ts';

const initializeResult = z.object({
  created: z.boolean().describe('false when the account was already initialized'),
  user: userSchema,
  organization: organizationSchema.nullable(),
  project: projectSchema.nullable(),
});

const userOnly = 'Needs a user sign-in: an access key is answered 403.';
/** Every route here is about the caller's own account. */
const ownAccount = { user: "the signed-in user's own account; access keys have none" };

export interface ProfileRouteDeps extends OnboardingDeps {
  users: Pick<UserStore, 'findById' | 'setOnboardingCompleted'>;
  userInitializer: Pick<UserInitializer, 'initialize' | 'defaultsOf'>;
  authorizer: Pick<Authorizer, 'orgRole' | 'projectRole'>;
}

const profile = userSchema.extend({ default_organization_id: z.string().nullable(), default_project_id: z.string().nullable() });

/**
 * The signed-in user's own set-up: `POST /auth/initialize` (it is about the profile, so it
 * lives here though its path is under /auth), the profile and the onboarding flag. Signed-in
 * users only: access keys have no profile (403).
 */
export function profileRoutes(s: ProfileRouteDeps): RouteGroup {
  const onboarding = (completed: boolean, summary: string, message: string) =>
    route({
      method: 'post',
      path: `/profile/onboarding/${completed ? 'complete' : 'reset'}`,
      summary,
      description: userOnly,
      authorize: ownAccount,
      response: onboardingSchema,
      async handle(ctx, { access }) {
        ok(ctx, await onboardingStatus(s, await s.users.setOnboardingCompleted(access.id, completed)), message);
      },
    });

  return {
    prefix: '',
    tag: 'Profile',
    routes: [
      route({
        method: 'post',
        path: '/auth/initialize',
        summary: "Create the signed-in user's default organization and project (once; later calls change nothing)",
        description: userOnly,
        authorize: ownAccount,
        response: initializeResult,
        async handle(ctx, { access }) {
          const me = access.user;
          const result = await s.userInitializer.initialize(me);
          const { organization, project } = result;
          ok(
            ctx,
            {
              created: result.created,
              user: presentUser((await s.users.findById(me.id))!),
              organization: organization ? presentOrganization(organization, await s.authorizer.orgRole(me.id, organization.id)) : null,
              project: project ? presentProject(project, await s.authorizer.projectRole(me.id, project)) : null,
            },
            result.created ? 'Account initialized' : 'Account already initialized',
          );
        },
      }),
      route({
        method: 'get',
        path: '/profile/me',
        summary: "The signed-in user's profile with their default organization and project",
        description: userOnly,
        authorize: ownAccount,
        response: profile,
        async handle(ctx, { access }) {
          const defaults = await s.userInitializer.defaultsOf(access.id);
          ok(ctx, {
            ...presentUser((await s.users.findById(access.id))!),
            default_organization_id: defaults.organization?.id ?? null,
            default_project_id: defaults.project?.id ?? null,
          });
        },
      }),
      route({
        method: 'get',
        path: '/profile/onboarding/status',
        summary: "The signed-in user's onboarding: steps computed from real state (project created, content added, key or agent created, connected)",
        description: `${userOnly} A step is done when its evidence exists now in a project the user reaches; completed when every step is done or the user completed it explicitly.`,
        authorize: ownAccount,
        response: onboardingSchema,
        async handle(ctx, { access }) {
          ok(ctx, await onboardingStatus(s, (await s.users.findById(access.id))!));
        },
      }),
      onboarding(true, 'Mark onboarding as completed (whatever the steps say); answers the status', 'Onboarding completed'),
      onboarding(false, 'Clear the explicit completion (completed then follows the steps); answers the status', 'Onboarding reset'),
    ],
  };
}
