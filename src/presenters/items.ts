import { z } from 'zod';
import { puppyOneShapes } from './compat.ts';

/**
 * PuppyOne's command lines read every list answer's entries as `items` (or take `data` itself as
 * the array). A list answer keeps its own named field (`nodes`, `versions`, `logs`, …: README
 * "API conventions") and, with CNS_PUPPYONE_COMPAT (compat.ts), carries the same entries again as
 * `items` (README "Coming from PuppyOne"): serialized twice, about double the answer's bytes.
 */
export function withItems<K extends string, T>(key: K, list: T[]): { [P in K]: T[] } & { items?: T[] } {
  return (puppyOneShapes() ? { [key]: list, items: list } : { [key]: list }) as { [P in K]: T[] } & { items?: T[] };
}

/** The schema of `items` beside the list field `key`, for the OpenAPI document. */
export function itemsSchema<T extends z.ZodType>(entry: T, key: string) {
  return z.array(entry).optional().describe(`with CNS_PUPPYONE_COMPAT: the same entries as \`${key}\`, by the name PuppyOne's command lines read`);
}
