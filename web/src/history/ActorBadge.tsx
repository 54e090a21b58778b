import { actorOf } from './actor.ts';

/** Who made a version or a commit: people and agents look different (colour, italics and the word "agent"). */
export function ActorBadge({ actor_type, author }: { actor_type: string; author: string }) {
  const actor = actorOf({ actor_type, author });
  return (
    <span class={`badge ${actor.kind}`} title={actor.kind === 'agent' ? 'An agent made this change' : undefined}>
      {actor.kind === 'agent' ? `agent ${actor.label}` : actor.label}
    </span>
  );
}
