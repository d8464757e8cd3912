// Volcengine web search (custom and global editions): one JSON call, billed per successful call.
import { postForText } from '../http.js';
import type { Upstream } from '../pool.js';

export const SEARCH_PATHS = { web: '/search_api/web_search', global: '/search_api/global_search' } as const;
export type SearchEdition = keyof typeof SEARCH_PATHS;

export class SearchUpstreamError extends Error {
  override name = 'SearchUpstreamError';
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
  if (failure) throw new SearchUpstreamError(`search upstream error ${failure.Code ?? failure.CodeN}: ${failure.Message ?? ''}`);
  return answer;
}
