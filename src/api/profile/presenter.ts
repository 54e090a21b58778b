import { z } from 'zod';
import type { UserRecord } from '../../domain/users/userStore.ts';

export function presentOnboarding(user: UserRecord) {
  return {
    initialized: user.initialized_at !== null,
    initialized_at: user.initialized_at,
    completed: user.onboarding_completed_at !== null,
    completed_at: user.onboarding_completed_at,
  };
}

export const onboardingSchema = z.object({
  initialized: z.boolean(),
  initialized_at: z.string().nullable(),
  completed: z.boolean(),
  completed_at: z.string().nullable(),
});
