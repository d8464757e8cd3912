// Vertex AI's token endpoint, as the sandbox plays it: a service account's JWT bearer grant (RFC 7523)
// signed with the sandbox account's key is answered with an access token, which the Vertex routes
// (gemini.ts) then take; a grant signed with any other key is refused, as Google refuses it.
import { createPublicKey, randomBytes, verify } from 'node:crypto';
import type { SandboxContext, SandboxRoute } from './route.js';
import { isRecord } from './text.js';
import { SANDBOX_SERVICE_ACCOUNT_EMAIL, SANDBOX_SERVICE_ACCOUNT_PUBLIC_KEY } from './vertex-account.js';

const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const TOKEN_SECONDS = 3600;
const publicKey = createPublicKey(SANDBOX_SERVICE_ACCOUNT_PUBLIC_KEY);
/** Tokens issued, with when each expires (ms): the sandbox's, shared by its routes. */
const issued = new Map<string, number>();

const oauthError = (error: string, description: string) => ({ error, error_description: description });

export const vertexTokenRoute: SandboxRoute = {
  kind: 'vertex-token',
  method: 'POST',
  path: '/token',
  errorBody: (_status, message) => oauthError('invalid_request', message),
  handle: answerToken,
};

function answerToken(ctx: SandboxContext): void {
  const form = new URLSearchParams(ctx.rawBody.toString('utf8'));
  if (form.get('grant_type') !== JWT_BEARER) return ctx.reply.json(400, oauthError('unsupported_grant_type', `expected grant_type=${JWT_BEARER}`));
  const claims = verifiedClaims(form.get('assertion') ?? '');
  if (typeof claims === 'string') return ctx.reply.json(400, oauthError('invalid_grant', claims));
  const token = `ya29.sandbox-${randomBytes(16).toString('hex')}`;
  issued.set(token, Date.now() + TOKEN_SECONDS * 1000);
  ctx.reply.json(200, { access_token: token, expires_in: TOKEN_SECONDS, token_type: 'Bearer' });
}

/** The grant's claims when its RS256 signature is the sandbox account's and it is current; else why not. */
function verifiedClaims(assertion: string): Record<string, unknown> | string {
  const [header, payload, signature] = assertion.split('.');
  if (!header || !payload || !signature) return 'the assertion is not a JWT';
  const signed = verify('RSA-SHA256', Buffer.from(`${header}.${payload}`), publicKey, Buffer.from(signature, 'base64url'));
  if (!signed) return 'Invalid JWT Signature.';
  let claims: unknown;
  try {
    claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return 'the assertion carries no JSON claims';
  }
  if (!isRecord(claims)) return 'the assertion carries no JSON claims';
  if (claims.iss !== SANDBOX_SERVICE_ACCOUNT_EMAIL) return `unknown service account ${String(claims.iss)}`;
  if (typeof claims.exp !== 'number' || claims.exp * 1000 < Date.now()) return 'the assertion has expired';
  return claims;
}

/** Whether `authorization` carries a token this sandbox issued and that has not expired. */
export function validVertexToken(authorization: string | undefined): boolean {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1];
  const expires = token === undefined ? undefined : issued.get(token);
  return expires !== undefined && expires > Date.now();
}
