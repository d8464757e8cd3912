// What the operator's view says in its own words, in a file of its own (no imports) so the browser
// test can compare against the same text.

/** The sign-in form's answer when the gateway refuses a pasted token. */
export const TOKEN_REFUSED = 'That is not this gateway’s admin token: check admin_token in its config.';

/** Shown on the sign-in form when a token that worked is refused later (it was changed). */
export const TOKEN_NO_LONGER_ACCEPTED = 'The gateway refused the admin token (it may have changed). Paste the current one.';
