import { hasBearer } from './openai-common.js';
import type { SandboxContext, SandboxRoute } from './route.js';
import { hashOf, isRecord, words } from './text.js';

// Volcengine web search (volcengine-formats.md §3): PascalCase JSON, errors as HTTP 200 with
// `ResponseMetadata.Error` and `Result: null`. Results are made from the query and their index.

const MAX_QUERY_CHARACTERS = 100; // longer queries are cut, not refused, as the real API does
const WEB_COUNT = { default: 10, max: 50 };
const GLOBAL_DOC_COUNT = { default: 10, max: 20 };
const MAX_SNIPPET_LENGTH = 3000;
const MAX_IMAGES_PER_DOC = 10;
/** Results are dated back one day per rank from this day. */
const NEWEST_PUBLISHED_MS = Date.UTC(2025, 5, 1);
const DAY_MS = 86_400_000;

const ERROR_NAMES: Record<number, string> = {
  10400: 'ParamError',
  10401: 'InvalidTopToken',
  10402: 'InvalidSearchType',
  10500: 'InnerError',
  700429: 'FreeRateLimitExceeded',
};

interface SearchErrorBody {
  ResponseMetadata: { RequestId: string; Error: { CodeN: number; Code: string; Message: string } };
  Result: null;
}

export function searchError(codeN: number, message: string, requestId = 'sandbox'): SearchErrorBody {
  return { ResponseMetadata: { RequestId: requestId, Error: { CodeN: codeN, Code: String(codeN), Message: message } }, Result: null };
}

/** The code a search upstream would put in its error for an HTTP status. */
export function searchErrorForStatus(status: number, message: string): SearchErrorBody {
  const code = status === 401 ? 10401 : status === 429 ? 700429 : status >= 500 ? 10500 : 10400;
  return searchError(code, `${ERROR_NAMES[code]}: ${message}`);
}

export const webSearchRoute: SandboxRoute = {
  kind: 'search',
  method: 'POST',
  path: '/search_api/web_search',
  errorBody: searchErrorForStatus,
  handle: answerWebSearch,
};

export const globalSearchRoute: SandboxRoute = {
  kind: 'search',
  method: 'POST',
  path: '/search_api/global_search',
  errorBody: searchErrorForStatus,
  handle: answerGlobalSearch,
};

function answerWebSearch(ctx: SandboxContext): void {
  const requestId = hashOf(ctx.body);
  const headers = { 'x-tt-logid': requestId };
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, searchError(10401, 'InvalidTopToken: send Authorization: Bearer <key>', requestId));
  const request = parseWebSearch(ctx.body);
  // errors travel as HTTP 200, as the real API sends them
  if (!('query' in request)) return ctx.reply.json(200, searchError(request.code, request.message, requestId), headers);
  const { query, count, contentFormat } = request;
  ctx.reply.json(
    200,
    {
      ResponseMetadata: { RequestId: requestId },
      Result: {
        ResultCount: count,
        WebResults: Array.from({ length: count }, (_, index) => webResult(query, index, contentFormat)),
        ImageResults: null,
        CardResults: null,
        SearchContext: { OriginQuery: query, SearchType: 'web' },
        TimeCost: 100,
        LogId: requestId,
      },
    },
    headers,
  );
}

type Refusal = { code: number; message: string };

function parseWebSearch(body: unknown): { query: string; count: number; contentFormat: string } | Refusal {
  if (!isRecord(body)) return { code: 10400, message: 'ParamError: body: expected a JSON object' };
  const { Query: query, SearchType: type, Count: count = WEB_COUNT.default, ContentFormats: format = 'text' } = body;
  if (typeof query !== 'string' || query.trim() === '' || typeof type !== 'string' || type === '') {
    return { code: 10400, message: 'query or search type is empty' };
  }
  if (type !== 'web') return { code: 10402, message: `InvalidSearchType: SearchType ${type} is not enabled for this key` };
  if (!Number.isSafeInteger(count) || (count as number) < 1) return { code: 10400, message: 'ParamError: Count: expected a positive integer' };
  if (format !== 'text' && format !== 'markdown') return { code: 10400, message: 'ParamError: ContentFormats: expected "text" or "markdown"' };
  return { query: cut(query, MAX_QUERY_CHARACTERS), count: Math.min(count as number, WEB_COUNT.max), contentFormat: format };
}

function webResult(query: string, index: number, contentFormat: string) {
  const rank = index + 1;
  const { host, slug } = source(query, index);
  return {
    Id: `${slug}-${rank}`,
    SortId: rank,
    Title: `${query}: result ${rank}`,
    SiteName: host,
    Url: `https://${host}/${slug}/${rank}`,
    Snippet: `Snippet ${rank} about ${query}.`,
    Summary: `Summary ${rank} about ${query}, the part of the page most relevant to the query.`,
    Content: `Content ${rank} about ${query}. The whole page, as the search index holds it.`,
    PublishTime: `${publishedDay(index)}T10:00:00+08:00`,
    LogoUrl: `https://${host}/logo.png`,
    RankScore: Math.round((1 - index * 0.01) * 100) / 100,
    AuthInfoDes: '正常权威',
    AuthInfoLevel: 2,
    ContentFormats: contentFormat,
    RuyiInfo: null,
  };
}

function answerGlobalSearch(ctx: SandboxContext): void {
  const requestId = hashOf(ctx.body);
  const headers = { 'x-tt-logid': requestId };
  if (!hasBearer(ctx.headers)) return ctx.reply.json(401, searchError(10401, 'InvalidTopToken: send Authorization: Bearer <key>', requestId));
  const request = parseGlobalSearch(ctx.body);
  if (!('query' in request)) return ctx.reply.json(200, searchError(request.code, request.message, requestId), headers);
  const documents = Array.from({ length: request.docCount }, (_, index) => globalDocument(request, index));
  ctx.reply.json(200, { ResponseMetadata: { RequestId: requestId }, Result: { TotalDocCount: documents.length, Documents: documents } }, headers);
}

interface GlobalSearch {
  query: string;
  docCount: number;
  maxSnippetLength: number;
  imagesPerDoc: number;
}

/** Clients disagree on casing (§3.4), so both `Query`/`DocCount`… and `query`/`doc_count`… are read. */
function parseGlobalSearch(body: unknown): GlobalSearch | Refusal {
  if (!isRecord(body)) return { code: 10400, message: 'ParamError: body: expected a JSON object' };
  const query = body.Query ?? body.query;
  if (typeof query !== 'string' || query.trim() === '') return { code: 10400, message: 'query is empty' };
  const fields = [
    ['DocCount', body.DocCount ?? body.doc_count, GLOBAL_DOC_COUNT.default, 1, GLOBAL_DOC_COUNT.max],
    ['MaxSnippetLength', body.MaxSnippetLength ?? body.max_snippet_length, MAX_SNIPPET_LENGTH, 1, MAX_SNIPPET_LENGTH],
    ['MaxImageCountPerDoc', body.MaxImageCountPerDoc ?? body.max_image_count_per_doc, 0, 0, MAX_IMAGES_PER_DOC],
  ] as const;
  const values: number[] = [];
  for (const [name, value, fallback, min, max] of fields) {
    if (value === undefined || value === null) values.push(fallback);
    else if (!Number.isSafeInteger(value) || (value as number) < min) {
      return { code: 10400, message: `ParamError: ${name}: expected an integer of at least ${min}` };
    } else values.push(Math.min(value as number, max));
  }
  const [docCount = 0, maxSnippetLength = 0, imagesPerDoc = 0] = values;
  return { query: cut(query, MAX_QUERY_CHARACTERS), docCount, maxSnippetLength, imagesPerDoc };
}

function globalDocument({ query, maxSnippetLength, imagesPerDoc }: GlobalSearch, index: number) {
  const { host, slug } = source(query, index);
  const content = `Document ${index + 1} about ${query}. The text a global search hands back for it.`;
  const images = Array.from({ length: imagesPerDoc }, (_, i) => ({
    Type: 'image',
    Image: { Width: 800, Height: 600, ImageUrl: `https://${host}/${slug}/${index}/image-${i + 1}.jpg` },
  }));
  return {
    Rank: index,
    Url: `https://${host}/${slug}/${index}`,
    Title: `${query}: document ${index + 1}`,
    Snippet: [{ Type: 'text', Text: cut(content, maxSnippetLength) }, ...images],
    DocumentInfo: {
      ContentCharCount: [...content].length,
      ContentTokenCount: words(content).length,
      Filetype: 'html',
      PublishTime: `${publishedDay(index)} 10:00:00`,
    },
    HostInfo: { Hostname: host },
  };
}

/** Five hosts in turn, and a path segment that names the query. */
function source(query: string, index: number): { host: string; slug: string } {
  return { host: `site${(index % 5) + 1}.example.com`, slug: hashOf(query).slice(0, 12) };
}

function publishedDay(index: number): string {
  return new Date(NEWEST_PUBLISHED_MS - index * DAY_MS).toISOString().slice(0, 10);
}

/** The first `max` code points. */
function cut(text: string, max: number): string {
  const characters = [...text];
  return characters.length <= max ? text : characters.slice(0, max).join('');
}
