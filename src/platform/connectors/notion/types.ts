/**
 * The parts of Notion's wire format (API version 2022-06-28) the connector reads and writes.
 * Only the fields used are typed; everything else passes through untouched.
 */

export interface RichText {
  type: 'text' | 'mention' | 'equation';
  plain_text: string;
  href: string | null;
  annotations?: Partial<Annotations>;
  text?: { content: string; link: { url: string } | null };
  mention?: { type: string; page?: { id: string }; database?: { id: string }; user?: { id: string; name?: string } };
  equation?: { expression: string };
}

export interface Annotations {
  bold: boolean;
  italic: boolean;
  strikethrough: boolean;
  underline: boolean;
  code: boolean;
  color: string;
}

export type Parent =
  | { type: 'workspace'; workspace: true }
  | { type: 'page_id'; page_id: string }
  | { type: 'database_id'; database_id: string }
  | { type: 'block_id'; block_id: string };

/** A block as `GET /v1/blocks/{id}/children` returns it: its type's payload under the key of its type. */
export interface Block {
  object: 'block';
  id: string;
  type: string;
  has_children: boolean;
  parent?: Parent;
  archived?: boolean;
  in_trash?: boolean;
  [payload: string]: unknown;
}

/** A block with its children fetched (when `has_children`). */
export interface BlockNode {
  block: Block;
  children: BlockNode[];
}

export interface Page {
  object: 'page';
  id: string;
  created_time: string;
  last_edited_time: string;
  archived: boolean;
  in_trash?: boolean;
  parent: Parent;
  url: string;
  properties: Record<string, PropertyValue>;
}

/** A property value of a page or database row: `{id, type, [type]: value}`. */
export interface PropertyValue {
  id: string;
  type: string;
  [value: string]: unknown;
}

export interface Database {
  object: 'database';
  id: string;
  title: RichText[];
  last_edited_time: string;
  archived?: boolean;
  in_trash?: boolean;
  parent: Parent;
  url: string;
  /** The schema: property name → `{id, name, type, [type]: options}`. */
  properties: Record<string, { id: string; name: string; type: string; [options: string]: unknown }>;
}

export interface ListAnswer<T> {
  object: 'list';
  results: T[];
  next_cursor: string | null;
  has_more: boolean;
}

/** The plain text of a rich text array. */
export function plainText(rich: RichText[] | undefined): string {
  return (rich ?? []).map((r) => r.plain_text).join('');
}

/** A page's title: the value of its `title` property, whatever the property is called. */
export function pageTitle(page: Pick<Page, 'properties'>): string {
  for (const p of Object.values(page.properties)) if (p.type === 'title') return plainText(p.title as RichText[]);
  return '';
}

/** Notion ids are UUIDs, written with or without dashes: compare them in one form. */
export function normalizeId(id: string): string {
  const hex = id.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(hex)) return id;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The page's address in Notion (for links to things not synced here). */
export function notionUrl(id: string): string {
  return `https://www.notion.so/${id.replace(/-/g, '')}`;
}
