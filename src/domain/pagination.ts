/** A window into a list (`limit`/`offset`) and the items it selected with the list's full size. */
export interface Page {
  limit: number;
  offset: number;
}

export interface Paged<T> {
  items: T[];
  total: number;
}
