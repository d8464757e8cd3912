// The OpenAI chat completions wire types the gateway reads (only the fields it needs).

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number; audio_tokens?: number; image_tokens?: number } | null;
  completion_tokens_details?: { reasoning_tokens?: number; audio_tokens?: number } | null;
}

export interface ChatRequest {
  model: string;
  messages: unknown[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean; [key: string]: unknown } | null;
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  [key: string]: unknown;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  model: string;
  choices: {
    index: number;
    message: { role: string; content: string | null; tool_calls?: unknown[]; refusal?: string | null; reasoning_content?: string | null };
    finish_reason: string | null;
  }[];
  usage?: ChatUsage | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  choices: {
    index: number;
    delta: { content?: string | null; tool_calls?: unknown[]; role?: string; reasoning_content?: string | null; reasoning?: string | null };
    finish_reason: string | null;
  }[];
  usage?: ChatUsage | null;
}

// What the gateway writes when it translates another protocol into a chat request, and the tool
// call shapes it reads back (the fields above stay `unknown[]`: upstreams vary, so readers narrow).

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** One streamed piece of a tool call: the first names it, later ones carry argument text. */
export interface ChatToolCallFragment {
  index?: number;
  id?: string | null;
  type?: 'function';
  function?: { name?: string | null; arguments?: string | null };
}

export type ChatContentPart =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string; detail?: 'auto' | 'low' | 'high' } }
  | { type: 'file'; file: { file_data?: string; file_id?: string; filename?: string } };

export type ChatMessage =
  | { role: 'system' | 'developer'; content: string }
  | { role: 'user'; content: string | ChatContentPart[] }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string | ChatContentPart[] };

export interface ChatTool {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown>; strict?: boolean };
}

export type ChatToolChoice = 'none' | 'auto' | 'required' | { type: 'function'; function: { name: string } };
