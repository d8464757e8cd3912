// SigV4 for a Bedrock channel: the headers that sign one POST, computed over the exact path and body
// text that go on the wire. Never logs a credential.
import { Hash } from '@smithy/hash-node';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { ChannelConfig } from '../../config/schema.js';

/** SHA-256 from Node's own crypto (OpenSSL), as the AWS SDK signs in Node: far cheaper than a JavaScript digest. */
const NODE_SHA256 = Hash.bind(null, 'sha256');

/** The service name Bedrock's runtime signs under (bedrock-runtime is only its host name). */
export const BEDROCK_SIGNING_SERVICE = 'bedrock';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

/** The channel's credentials, each defaulting to the AWS SDKs' environment variable of the same meaning. */
export function credentialsOf(channel: ChannelConfig, env: Env = process.env): AwsCredentials {
  const accessKeyId = channel.access_key_id ?? env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = channel.secret_access_key ?? env.AWS_SECRET_ACCESS_KEY;
  const sessionToken = channel.session_token ?? env.AWS_SESSION_TOKEN;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error('a bedrock channel needs access_key_id and secret_access_key (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment)');
  }
  return { accessKeyId, secretAccessKey, ...(sessionToken && { sessionToken }) };
}

// One signer per channel config (a reload makes new ones): it caches the day's signing keys.
const signers = new WeakMap<ChannelConfig, SignatureV4>();

function signerOf(channel: ChannelConfig): SignatureV4 {
  let signer = signers.get(channel);
  if (!signer) {
    const region = channel.region;
    if (region === undefined) throw new Error('a bedrock channel needs its AWS region (region)');
    const credentials = credentialsOf(channel);
    // uriEscapePath (the default): the path is encoded once more for the signature, as every AWS
    // service but S3 wants, so a model id already escaped in the path (`%3A`) is signed as `%253A`
    signer = new SignatureV4({ service: BEDROCK_SIGNING_SERVICE, region, credentials, sha256: NODE_SHA256 });
    signers.set(channel, signer);
  }
  return signer;
}

/**
 * The headers one POST carries, signature included. `path` is the whole path sent (base path and all)
 * and `body` the exact text sent; `host` is the Host header undici sends to the channel's pool, which
 * the caller also sends, so the signed and the sent values are one.
 */
export async function signedHeaders(channel: ChannelConfig, args: { path: string; body: string }): Promise<Record<string, string>> {
  const url = new URL(channel.base_url);
  const request = new HttpRequest({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    path: args.path,
    headers: { host: url.host, 'content-type': 'application/json' },
    body: args.body,
  });
  const signed = await signerOf(channel).sign(request);
  return signed.headers;
}
