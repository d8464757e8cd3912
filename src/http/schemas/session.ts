// JSON schemas of the account console's sign-in and sign-out (/v1/account/session).
import { AccountSchema } from './account.js';
import { errorResponses } from './errors.js';

const Secret = (description: string) => ({ type: 'string', minLength: 1, maxLength: 200, description }) as const;

export const SignInSchema = {
  tags: ['account'],
  // The credential is the body: a sign-in link's token or an API key.
  security: [],
  summary: 'Signs in to the account console with a one-time sign-in link’s token or an API key; answers a session cookie.',
  body: {
    type: 'object',
    additionalProperties: false,
    properties: {
      login_token: Secret('The token of a sign-in link the operator issued (after #token= in the link); good once.'),
      api_key: Secret('An API key (tr-…) of the account; the session ends when the key is revoked.'),
    },
  },
  response: {
    200: {
      description: 'Signed in: the session cookie is set (HttpOnly, SameSite=Strict).',
      type: 'object',
      required: ['account', 'expires_at'],
      properties: {
        account: AccountSchema.response[200],
        expires_at: { type: 'string', format: 'date-time', description: 'When the session ends unless signed out sooner.' },
      },
    },
    ...errorResponses(400, 401, 403, 429, 503),
  },
};

export const SignOutSchema = {
  tags: ['account'],
  // A request with a key instead is answered 400: there is no session to end.
  security: [{ cookieAuth: [] }],
  summary: 'Signs the console out: the session ends on the gateway and its cookie is cleared.',
  response: {
    204: { description: 'Signed out.', type: 'null' },
    ...errorResponses(400, 401, 403, 503),
  },
};
