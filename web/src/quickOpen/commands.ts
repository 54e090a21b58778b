/** What the palette can do besides opening a file (issue 34 point 4). */
export type CommandId = 'new-file' | 'search' | 'history' | 'trash' | 'settings' | 'chat' | 'shortcuts';

export interface Command {
  id: CommandId;
  label: string;
  /** More words it answers to. */
  keywords: string;
}

export const COMMANDS: Command[] = [
  { id: 'new-file', label: 'New file', keywords: 'create document markdown json folder' },
  { id: 'search', label: 'Search the project', keywords: 'find text full' },
  { id: 'history', label: 'Project history', keywords: 'versions changes log' },
  { id: 'trash', label: 'Trash', keywords: 'deleted restore' },
  { id: 'settings', label: 'Settings', keywords: 'members keys webhooks access' },
  { id: 'chat', label: 'Chat', keywords: 'agent assistant' },
  { id: 'shortcuts', label: 'Keyboard shortcuts', keywords: 'keys help' },
];

/** The commands whose label or keywords contain every word typed (all of them for nothing typed). */
export function matchCommands(text: string): Command[] {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  return COMMANDS.filter((c) => {
    const hay = `${c.label} ${c.keywords}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/** The shortcuts the dashboard answers to, as the `?` dialog lists them. */
export const SHORTCUTS: [string, string][] = [
  ['Ctrl K / ⌘ K', 'Quick open: find a file by name, or run a command'],
  ['?', 'This list (outside text fields)'],
  ['↑ ↓', 'Move through the quick open results, or the tree’s rows'],
  ['Enter', 'Open the chosen result, or the focused row'],
  ['→ ←', 'Open or close a folder in the tree'],
  ['Escape', 'Close the palette or this list (focus goes back where it was)'],
];
