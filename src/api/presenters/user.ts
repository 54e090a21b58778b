import { z } from 'zod';
import type { UserRecord } from '../../domain/users/userStore.ts';

/** The public shape of a user: never the password hash. */
export function presentUser(user: UserRecord) {
  return {
    id: user.id,
    email: user.email,
    display_name: user.display_name,
    is_admin: user.is_admin === 1,
    initialized: user.initialized_at !== null,
    onboarding_completed: user.onboarding_completed_at !== null,
    created_at: user.created_at,
  };
}

/** What `presentUser` answers (the response schema in the OpenAPI document). */
export const userSchema = z.object({
  id: z.string(),
  email: z.string(),
  display_name: z.string(),
  is_admin: z.boolean(),
  initialized: z.boolean(),
  onboarding_completed: z.boolean(),
  created_at: z.string(),
});
