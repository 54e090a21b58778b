import { z } from 'zod';

/** `data` of the answer to a DELETE of a resource by id. */
export const deletedSchema = z.object({ id: z.string(), deleted: z.literal(true) });

export function presentDeleted(id: string): z.output<typeof deletedSchema> {
  return { id, deleted: true };
}
