/** A failure, announced at once (role="alert"); nothing when there is none. */
export function ErrorAlert({ message }: { message: string | null }) {
  return message ? (
    <p role="alert" class="error">
      {message}
    </p>
  ) : null;
}
