import { z } from 'zod';

export const onboardingStepSchema = z.object({
  id: z.enum(['project_created', 'content_added', 'key_or_agent_created', 'connected']),
  done: z.boolean(),
  label: z.string(),
  done_at: z.string().nullable().describe('when the step was first done (the oldest project, the first commit, the first connection)'),
});

/** The answer of the onboarding routes (computed by onboarding.ts; nothing to present beyond it). */
export const onboardingSchema = z.object({
  initialized: z.boolean(),
  initialized_at: z.string().nullable(),
  steps: z.array(onboardingStepSchema).describe('computed from what exists now in the projects the user reaches'),
  completed: z.boolean().describe('every step done, or completed explicitly'),
  completed_explicitly: z.boolean().describe('POST /profile/onboarding/complete was called (reset clears it)'),
  completed_at: z.string().nullable().describe('the explicit completion, else when the last step was done'),
});
