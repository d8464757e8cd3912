// The Anthropic Messages wire types the gateway reads and writes (chat-formats.md §1), only the
// fields it needs; the request keeps an index signature because clients send newer fields.

export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

// ── Request ──────────────────────────────────────────────────────────────────────────────────

export interface TextBlockParam {
  type: 'text';
  text: string;
  cache_control?: CacheControl | null;
  citations?: unknown[] | null;
}

export interface Base64ImageSource {
  type: 'base64';
  media_type: 'image/jpeg' | 'image/png' | 'image/gif' | 'image/webp';
  data: string;
}

export interface UrlImageSource {
  type: 'url';
  url: string;
}

export interface ImageBlockParam {
  type: 'image';
  source: Base64ImageSource | UrlImageSource;
  cache_control?: CacheControl | null;
}

export interface Base64PdfSource {
  type: 'base64';
  media_type: 'application/pdf';
  data: string;
}

export interface PlainTextSource {
  type: 'text';
  media_type: 'text/plain';
  data: string;
}

export interface UrlPdfSource {
  type: 'url';
  url: string;
}

export interface ContentBlockSource {
  type: 'content';
  content: string | (TextBlockParam | ImageBlockParam)[];
}

export interface DocumentBlockParam {
  type: 'document';
  source: Base64PdfSource | PlainTextSource | UrlPdfSource | ContentBlockSource;
  title?: string | null;
  context?: string | null;
  citations?: { enabled?: boolean } | null;
  cache_control?: CacheControl | null;
}

export interface ToolUseBlockParam {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
  cache_control?: CacheControl | null;
}

export interface ToolResultBlockParam {
  type: 'tool_result';
  tool_use_id: string;
  content?: string | (TextBlockParam | ImageBlockParam | DocumentBlockParam)[];
  is_error?: boolean;
  cache_control?: CacheControl | null;
}

export interface ThinkingBlockParam {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlockParam {
  type: 'redacted_thinking';
  data: string;
}

export type ContentBlockParam =
  | TextBlockParam
  | ImageBlockParam
  | DocumentBlockParam
  | ToolUseBlockParam
  | ToolResultBlockParam
  | ThinkingBlockParam
  | RedactedThinkingBlockParam;

export interface MessageParam {
  role: 'user' | 'assistant';
  content: string | ContentBlockParam[];
}

export interface CustomTool {
  type?: 'custom';
  name: string;
  description?: string;
  input_schema: { type: 'object'; properties?: unknown; required?: string[] | null; [key: string]: unknown };
  cache_control?: CacheControl | null;
  strict?: boolean;
}

/** A tool the provider runs itself (`web_search_20250305`, …): no schema, nothing a function can stand for. */
export interface ServerTool {
  type: string;
  name: string;
  [key: string]: unknown;
}

export type Tool = CustomTool | ServerTool;

export type ToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlockParam[];
  stop_sequences?: string[];
  temperature?: number;
  top_p?: number;
  top_k?: number;
  tools?: Tool[];
  tool_choice?: ToolChoice;
  metadata?: { user_id?: string | null };
  stream?: boolean;
  [key: string]: unknown;
}

// ── Response ─────────────────────────────────────────────────────────────────────────────────

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal' | 'model_context_window_exceeded';

/** Anthropic semantics: `input_tokens` is uncached input only; the whole prompt is the sum of the three. */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens?: number;
  cache_read_input_tokens?: number;
  cache_creation?: { ephemeral_5m_input_tokens: number; ephemeral_1h_input_tokens: number };
  server_tool_use?: { web_search_requests: number };
}

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface RedactedThinkingBlock {
  type: 'redacted_thinking';
  data: string;
}

export type ContentBlock = TextBlock | ToolUseBlock | ThinkingBlock | RedactedThinkingBlock;

export interface Message {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  /** Null only inside `message_start`; a whole answer always has one. */
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

export type MessagesErrorType =
  | 'invalid_request_error'
  | 'authentication_error'
  | 'billing_error'
  | 'permission_error'
  | 'not_found_error'
  | 'request_too_large'
  | 'rate_limit_error'
  | 'api_error'
  | 'timeout_error'
  | 'overloaded_error';

export interface MessagesErrorBody {
  type: 'error';
  error: { type: MessagesErrorType; message: string };
}

// ── Stream (§1.5) ────────────────────────────────────────────────────────────────────────────

export type ContentBlockDelta =
  | { type: 'text_delta'; text: string }
  | { type: 'input_json_delta'; partial_json: string }
  | { type: 'thinking_delta'; thinking: string }
  | { type: 'signature_delta'; signature: string };

export type MessagesStreamEvent =
  | { type: 'message_start'; message: Message }
  | { type: 'content_block_start'; index: number; content_block: ContentBlock }
  | { type: 'content_block_delta'; index: number; delta: ContentBlockDelta }
  | { type: 'content_block_stop'; index: number }
  | { type: 'message_delta'; delta: { stop_reason: StopReason | null; stop_sequence: string | null }; usage: MessagesUsage }
  | { type: 'message_stop' }
  | { type: 'ping' }
  | MessagesErrorBody;
