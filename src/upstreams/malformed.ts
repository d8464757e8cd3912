// An upstream answered with a success status but not with its protocol's answer (a proxy's HTML
// page, a truncated body, a JSON object without the fields every answer has). Nothing in such an
// answer can be billed; whether to ask again is the caller's decision.
export class MalformedAnswerError extends Error {
  override name = 'MalformedAnswerError';
}
