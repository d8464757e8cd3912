// A failure the page could not get past, in the API's own words, announced to screen readers.
export function Failure({ message }: { message: string | undefined }) {
  if (message === undefined) return null;
  return (
    <p class="failure" role="alert">
      {message}
    </p>
  );
}
