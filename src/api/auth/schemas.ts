import { z } from 'zod';

export const loginBody = z.object({
  email: z.string().trim().min(1).max(320),
  password: z.string().min(1).max(1024),
});

export const signupBody = z.object({
  email: z.string().trim().email(),
  password: z.string().min(8, 'Passwords need at least 8 characters.').max(1024),
  display_name: z.string().trim().min(1).max(200).optional(),
});

export const refreshBody = z.object({
  refresh_token: z.string().min(1).max(512),
});
