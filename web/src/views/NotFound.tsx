/**
 * What a link to something the viewer may not see shows: the same words whether it does not
 * exist or is not theirs, so a link tells nothing about what others keep.
 */
export function NotFound({ what, onBack }: { what: string; onBack?: () => void }) {
  return (
    <section class="not-found" aria-labelledby="not-found-title">
      <h2 id="not-found-title">Not found or no access</h2>
      <p>{what} does not exist, or you do not have access to it. Ask the person who sent the link to check it, or to give you access.</p>
      {onBack && (
        <button type="button" onClick={onBack}>
          ← Projects
        </button>
      )}
    </section>
  );
}
