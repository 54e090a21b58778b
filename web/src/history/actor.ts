import type { VersionRecord } from '../api/types.ts';

/** Who made a version, as a label and a kind the view colours: people and agents look different. */
export function actorOf(v: Pick<VersionRecord, 'actor_type' | 'author'>): { kind: 'user' | 'agent' | 'other'; label: string } {
  if (v.actor_type === 'user') return { kind: 'user', label: v.author };
  if (v.actor_type === 'agent' || v.author.startsWith('agent:')) return { kind: 'agent', label: v.author.replace(/^agent:/, '') };
  return { kind: 'other', label: `${v.actor_type}: ${v.author}` };
}
