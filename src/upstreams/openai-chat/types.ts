// The OpenAI chat completions wire types the gateway reads (only the fields it needs).

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
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
  choices: { index: number; message: { role: string; content: string | null; tool_calls?: unknown[] }; finish_reason: string | null }[];
  usage?: ChatUsage | null;
}

export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  choices: { index: number; delta: { content?: string | null; tool_calls?: unknown[]; role?: string }; finish_reason: string | null }[];
  usage?: ChatUsage | null;
}
