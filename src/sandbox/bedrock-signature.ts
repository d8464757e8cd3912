// The sandbox's check of an AWS SigV4 signature: it signs the request it received again, with its own
// fixed credentials and the request's own X-Amz-Date, and compares. Smithy's signer, as AWS's SDKs use.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { SANDBOX_AWS_CREDENTIALS } from './bedrock-credentials.js';

/** SHA-256 from Node's own crypto (OpenSSL), as the AWS SDK signs in Node: far cheaper than a JavaScript digest. */
const NODE_SHA256 = Hash.bind(null, 'sha256');

/** Why a request is refused, in AWS's terms: the `x-amzn-errortype` and the message. */
export interface SignatureRefusal {
  readonly type: string;
  readonly message: string;
}

export interface ReceivedRequest {
  readonly method: string;
  /** As received: still percent-encoded, without the query. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\/(\d{8})\/([^/,\s]+)\/([^/,\s]+)\/aws4_request,\s*SignedHeaders=([a-z0-9;-]+),\s*Signature=([0-9a-f]{64})$/;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;

const MISMATCH: SignatureRefusal = {
  type: 'InvalidSignatureException',
  message:
    'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
};

/** Null when the request is signed by the sandbox's credentials for `service`; else why not. */
export async function refusedSignature(request: ReceivedRequest, service: string): Promise<SignatureRefusal | null> {
  const authorization = headerOf(request.headers, 'authorization');
  if (authorization === undefined) return { type: 'MissingAuthenticationTokenException', message: 'Missing Authentication Token' };
  const parts = AUTHORIZATION.exec(authorization);
  if (!parts)
    return { type: 'IncompleteSignatureException', message: 'Authorization header requires Credential, SignedHeaders and Signature (AWS4-HMAC-SHA256).' };
  const [, accessKeyId, day, region, scopedService, signedList] = parts as unknown as string[];
  if (accessKeyId !== SANDBOX_AWS_CREDENTIALS.accessKeyId) {
    return { type: 'UnrecognizedClientException', message: 'The security token included in the request is invalid.' };
  }
  if (scopedService !== service) return { type: 'InvalidSignatureException', message: `Credential should be scoped to correct service: '${service}'.` };
  const amzDate = headerOf(request.headers, 'x-amz-date') ?? '';
  const date = AMZ_DATE.exec(amzDate);
  if (!date || amzDate.slice(0, 8) !== day) return { type: 'IncompleteSignatureException', message: 'X-Amz-Date: required, the day of the credential scope' };
  const signedNames = (signedList as string).split(';');
  if (!signedNames.includes('host')) return { type: 'InvalidSignatureException', message: "'Host' must be a signed header" };
  // the signer trusts a stated payload hash; the sandbox checks it against the body that came
  const statedHash = headerOf(request.headers, 'x-amz-content-sha256');
  if (statedHash !== undefined && statedHash !== createHash('sha256').update(request.body).digest('hex')) return MISMATCH;

  const headers: Record<string, string> = {};
  for (const name of signedNames) {
    const value = headerOf(request.headers, name);
    if (value === undefined) return MISMATCH;
    headers[name] = value;
  }
  // applyChecksum as the client chose it: the signer adds x-amz-content-sha256 to the signed headers only then
  const applyChecksum = signedNames.includes('x-amz-content-sha256');
  const signer = new SignatureV4({ service, region: region as string, credentials: SANDBOX_AWS_CREDENTIALS, sha256: NODE_SHA256, applyChecksum });
  const [, year, month, dayOfMonth, hours, minutes, seconds] = date;
  const signingDate = new Date(`${year}-${month}-${dayOfMonth}T${hours}:${minutes}:${seconds}Z`);
  const expected = await signer.sign(
    new HttpRequest({ method: request.method, path: request.path, query: queryOf(request.query), headers, body: request.body }),
    { signingDate },
  );
  return sameText(expected.headers.authorization ?? '', authorization) ? null : MISMATCH;
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

function queryOf(query: URLSearchParams): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const name of new Set(query.keys())) {
    const values = query.getAll(name);
    out[name] = values.length === 1 ? (values[0] as string) : values;
  }
  return out;
}

/** Compared in constant time: the sandbox should not teach a client its secret a byte at a time. */
function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
