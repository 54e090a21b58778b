import Router from '@koa/router';
import type { Services } from '../../app/services.ts';
import { ok } from '../../http/envelope.ts';
import { principalOf } from '../../http/middleware/authenticate.ts';
import { presentUser } from '../auth/presenter.ts';
import { presentOrganization } from '../organizations/presenter.ts';
import { presentProject } from '../projects/presenter.ts';
import { presentOnboarding } from './presenter.ts';

/**
 * The signed-in user's own set-up: `POST /auth/initialize` (it is about the profile, so it
 * lives here though its path is under /auth), the profile and the onboarding flag.
 */
export function profileRoutes(s: Services): Router {
  const router = new Router();

  router.post('/auth/initialize', async (ctx) => {
    const { user } = s.authorizer.requireUser(principalOf(ctx));
    const result = await s.userInitializer.initialize(user);
    const { organization, project } = result;
    ok(
      ctx,
      {
        created: result.created,
        user: presentUser(s.users.findById(user.id)!),
        organization: organization ? presentOrganization(organization, s.authorizer.orgRole(user.id, organization.id)) : null,
        project: project ? presentProject(project, s.authorizer.projectRole(user.id, project)) : null,
      },
      result.created ? 'Account initialized' : 'Account already initialized',
    );
  });

  router.get('/profile/me', (ctx) => {
    const { user } = s.authorizer.requireUser(principalOf(ctx));
    const fresh = s.users.findById(user.id)!;
    const defaults = s.userInitializer.defaultsOf(user.id);
    ok(ctx, {
      ...presentUser(fresh),
      default_organization_id: defaults.organization?.id ?? null,
      default_project_id: defaults.project?.id ?? null,
    });
  });

  router.get('/profile/onboarding/status', (ctx) => {
    const { user } = s.authorizer.requireUser(principalOf(ctx));
    ok(ctx, presentOnboarding(s.users.findById(user.id)!));
  });

  router.post('/profile/onboarding/complete', (ctx) => {
    const { user } = s.authorizer.requireUser(principalOf(ctx));
    ok(ctx, presentOnboarding(s.users.setOnboardingCompleted(user.id, true)), 'Onboarding completed');
  });

  router.post('/profile/onboarding/reset', (ctx) => {
    const { user } = s.authorizer.requireUser(principalOf(ctx));
    ok(ctx, presentOnboarding(s.users.setOnboardingCompleted(user.id, false)), 'Onboarding reset');
  });

  return router;
}
