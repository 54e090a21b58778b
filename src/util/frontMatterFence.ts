/** The line that opens YAML front matter. Its own module (no parser): the dashboard checks it on every keystroke and loads the parser only when it matches. */
export const FRONT_MATTER_OPENING = /^---[ \t]*\r?\n/;

/** Cheap: whether the text opens with a front matter fence. */
export function opensWithFrontMatter(text: string): boolean {
  return FRONT_MATTER_OPENING.test(text);
}
