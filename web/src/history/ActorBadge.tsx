import { actorOf } from './actor.ts';

/**
 * Who made a version or a commit: people and agents look different (colour, italics and the word
 * "agent"). A pushed commit that names another author shows it beside: "authored by …".
 */
export function ActorBadge({ actor_type, author, authored_by }: { actor_type: string; author: string; authored_by?: string | null }) {
  const actor = actorOf({ actor_type, author });
  return (
    <>
      <span class={`badge ${actor.kind}`} title={actor.kind === 'agent' ? 'An agent made this change' : undefined}>
        {actor.kind === 'agent' ? `agent ${actor.label}` : actor.label}
      </span>
      {authored_by && (
        <span class="muted authored-by" title="The author the git commit names; the version is by whoever pushed it">
          {' '}authored by {authored_by}
        </span>
      )}
    </>
  );
}
