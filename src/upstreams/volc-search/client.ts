// Volcengine web search (custom and global editions): one JSON call, billed per successful call.
import { postForText } from '../http.js';
import type { Upstream } from '../pool.js';

export const SEARCH_PATHS = { web: '/search_api/web_search', global: '/search_api/global_search' } as const;
export type SearchEdition = keyof typeof SEARCH_PATHS;

// ParamError (volcengine-formats 3.3): the upstream refused the caller's own input, a blank Query
// or a field of the wrong type. Every other code is the upstream's or the operator's trouble.
const CALLER_FAULT_CODES = new Set([10400]);

/** An error the upstream reported inside a 200 (ResponseMetadata.Error). */
export class SearchUpstreamError extends Error {
  override name = 'SearchUpstreamError';
  constructor(
    readonly code: number | undefined,
    /** The upstream's own message. */
    readonly reason: string,
  ) {
    super(`search upstream error ${code ?? 'without a code'}: ${reason}`);
  }

  /** True when the caller's input was refused, not the gateway's credentials or the upstream itself. */
  get refusedInput(): boolean {
    return this.code !== undefined && CALLER_FAULT_CODES.has(this.code);
  }
}

interface SearchAnswer {
  ResponseMetadata?: { Error?: { Code?: string; CodeN?: number; Message?: string } };
  Result?: unknown;
  [field: string]: unknown;
}

/** Runs one search. The upstream reports failures inside a 200 (ResponseMetadata.Error): those throw. */
export async function search(upstream: Upstream, args: { edition: SearchEdition; body: Record<string, unknown>; signal: AbortSignal }): Promise<SearchAnswer> {
  const text = await postForText(upstream, {
    path: SEARCH_PATHS[args.edition],
    body: args.body,
    headers: upstream.channel.api_key ? { authorization: `Bearer ${upstream.channel.api_key}` } : undefined,
    signal: args.signal,
  });
  const answer = JSON.parse(text) as SearchAnswer;
  const failure = answer.ResponseMetadata?.Error;
  if (failure) throw new SearchUpstreamError(errorCode(failure), failure.Message ?? '');
  return answer;
}

/** CodeN, else the numeric text of Code (the two carry the same number). */
function errorCode(failure: { Code?: string; CodeN?: number }): number | undefined {
  if (Number.isSafeInteger(failure.CodeN)) return failure.CodeN;
  const parsed = Number(failure.Code);
  return failure.Code !== undefined && Number.isSafeInteger(parsed) ? parsed : undefined;
}
