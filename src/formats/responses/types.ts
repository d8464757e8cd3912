// Wire types of the OpenAI responses API (POST /v1/responses, chat-formats.md §4), as far as the
// gateway reads a request and writes an answer on a translated call. Field names are the API's.

/** A request body; fields the converter does not name are decided in to-pivot.ts. */
export interface ResponsesRequest {
  model: string;
  input?: string | ResponsesInputItem[];
  instructions?: string | null;
  tools?: ResponsesTool[];
  tool_choice?: unknown;
  parallel_tool_calls?: boolean | null;
  text?: { format?: ResponsesTextFormat | null; verbosity?: string | null } | null;
  reasoning?: { effort?: string | null; summary?: string | null; generate_summary?: string | null; mode?: string; context?: string | null } | null;
  max_output_tokens?: number | null;
  temperature?: number | null;
  top_p?: number | null;
  user?: string;
  safety_identifier?: string | null;
  stream?: boolean | null;
  include?: string[] | null;
  [field: string]: unknown;
}

/** Input items are read defensively (the route's schema checks only that each is an object). */
export type ResponsesInputItem = Record<string, unknown> & { type?: string };

export type ResponsesTool = Record<string, unknown> & { type: string };

export type ResponsesTextFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean | null; description?: string };

export interface OutputText {
  type: 'output_text';
  text: string;
  annotations: never[];
}

export interface MessageItem {
  type: 'message';
  id: string;
  status: ItemStatus;
  role: 'assistant';
  content: OutputText[];
}

export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: ItemStatus;
}

export interface SummaryText {
  type: 'summary_text';
  text: string;
}

export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  summary: SummaryText[];
  encrypted_content?: string;
}

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';
export type OutputItem = MessageItem | FunctionCallItem | ReasoningItem;

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

/** The response object: the answer, and the request's settings echoed as the API does. */
export interface ResponseObject {
  id: string;
  object: 'response';
  created_at: number;
  status: 'in_progress' | 'completed' | 'incomplete';
  background: false;
  error: null;
  incomplete_details: { reason: 'max_output_tokens' | 'content_filter' } | null;
  instructions: string | null;
  max_output_tokens: number | null;
  max_tool_calls: number | null;
  model: string;
  output: OutputItem[];
  parallel_tool_calls: boolean;
  previous_response_id: null;
  prompt_cache_key: string | null;
  reasoning: { effort: string | null; summary: string | null };
  safety_identifier: string | null;
  service_tier: string;
  store: false;
  temperature: number;
  text: { format: ResponsesTextFormat; verbosity: string };
  tool_choice: unknown;
  tools: unknown[];
  top_logprobs: number;
  top_p: number;
  truncation: string;
  usage: ResponsesUsage | null;
  user: string | null;
  metadata: Record<string, string>;
}

/** The events the encoder writes, each with the stream's `sequence_number` (added as it is sent). */
export type ResponsesStreamEvent =
  | { type: 'response.created' | 'response.in_progress' | 'response.completed' | 'response.incomplete'; response: ResponseObject }
  | { type: 'response.output_item.added' | 'response.output_item.done'; output_index: number; item: OutputItem }
  | { type: 'response.content_part.added' | 'response.content_part.done'; item_id: string; output_index: number; content_index: number; part: OutputText }
  | { type: 'response.output_text.delta'; item_id: string; output_index: number; content_index: number; delta: string; logprobs: never[] }
  | { type: 'response.output_text.done'; item_id: string; output_index: number; content_index: number; text: string; logprobs: never[] }
  | { type: 'response.function_call_arguments.delta'; item_id: string; output_index: number; delta: string }
  | { type: 'response.function_call_arguments.done'; item_id: string; output_index: number; name: string; arguments: string }
  | {
      type: 'response.reasoning_summary_part.added' | 'response.reasoning_summary_part.done';
      item_id: string;
      output_index: number;
      summary_index: number;
      part: SummaryText;
    }
  | { type: 'response.reasoning_summary_text.delta'; item_id: string; output_index: number; summary_index: number; delta: string }
  | { type: 'response.reasoning_summary_text.done'; item_id: string; output_index: number; summary_index: number; text: string };
