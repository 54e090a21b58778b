import { z } from 'zod';

/**
 * PuppyOne's command lines read every list answer's entries as `items` (or take `data` itself as
 * the array). A list answer keeps its own named field (`nodes`, `versions`, `logs`, …: README
 * "API conventions") and carries the same entries again as `items` (README "Coming from PuppyOne").
 * The entries are serialized twice: about double the answer's bytes (docs/benchmarks.md).
 */
export function withItems<K extends string, T>(key: K, list: T[]): { [P in K]: T[] } & { items: T[] } {
  return { [key]: list, items: list } as { [P in K]: T[] } & { items: T[] };
}

/** The schema of `items` beside the list field `key`, for the OpenAPI document. */
export function itemsSchema<T extends z.ZodType>(entry: T, key: string) {
  return z.array(entry).describe(`the same entries as \`${key}\`, by the name PuppyOne's command lines read`);
}
