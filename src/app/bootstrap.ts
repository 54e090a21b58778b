import { randomBytes } from 'node:crypto';
import type { Services } from './services.ts';

export interface BootstrapResult {
  createdAdmin: { email: string; generatedPassword: string | null } | null;
}

/**
 * First start on an empty data folder: the schema is already migrated by openDatabase and the
 * signing secret created; what remains is the first administrator, from CNS_ADMIN_EMAIL /
 * CNS_ADMIN_PASSWORD or with a generated password that is shown exactly once.
 */
export async function bootstrap(s: Services): Promise<BootstrapResult> {
  if ((await s.users.count()) > 0) return { createdAdmin: null };
  const email = s.settings.adminEmail ?? 'admin@cns.local';
  const generatedPassword = s.settings.adminPassword ? null : randomBytes(18).toString('base64url');
  await s.users.create({ email, password: s.settings.adminPassword ?? generatedPassword!, displayName: 'Administrator', isAdmin: true });
  return { createdAdmin: { email, generatedPassword } };
}
