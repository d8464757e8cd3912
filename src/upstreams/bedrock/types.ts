// Amazon Bedrock's Converse and ConverseStream wire types, as far as the gateway writes and reads them;
// the names are the API's. Every content block is a union: exactly one of its members is set.

// ── Request ──────────────────────────────────────────────────────────────────────────────────

export type ImageFormat = 'png' | 'jpeg' | 'gif' | 'webp';

/** JSON carries a blob's bytes as base64. */
export interface BytesSource {
  bytes: string;
}

export interface ToolUseBlock {
  toolUseId: string;
  name: string;
  /** The arguments: a JSON object, not text. */
  input: unknown;
}

export interface ImageBlock {
  format: ImageFormat;
  source: BytesSource;
}

export interface DocumentBlock {
  format: 'pdf';
  /** Letters, digits, single spaces, hyphens, parentheses and square brackets only. */
  name: string;
  source: BytesSource;
}

/** What a user turn and a tool result both carry. */
export interface MediaBlock {
  text?: string;
  image?: ImageBlock;
  document?: DocumentBlock;
}

export interface ToolResultContent extends MediaBlock {
  json?: unknown;
}

export interface ToolResultBlock {
  toolUseId: string;
  content: ToolResultContent[];
  status?: 'success' | 'error';
}

export interface ReasoningContentBlock {
  reasoningText?: { text: string; signature?: string };
  /** Encrypted reasoning, base64. */
  redactedContent?: string;
}

export interface ContentBlock extends MediaBlock {
  toolUse?: ToolUseBlock;
  toolResult?: ToolResultBlock;
  reasoningContent?: ReasoningContentBlock;
}

export interface Message {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface ToolSpec {
  name: string;
  description?: string;
  inputSchema: { json: Record<string, unknown> };
  strict?: boolean;
}

export type ToolChoice = { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };

export interface ToolConfig {
  tools: { toolSpec: ToolSpec }[];
  toolChoice?: ToolChoice;
}

export interface InferenceConfig {
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
}

/** Structured output: the schema travels as JSON text. */
export interface OutputConfig {
  textFormat: { type: 'json_schema'; structure: { jsonSchema: { schema: string; name?: string; description?: string } } };
}

/** The body of both calls; the model id is in the path, streaming is the path's choice. */
export interface ConverseRequest {
  messages: Message[];
  system?: { text: string }[];
  inferenceConfig?: InferenceConfig;
  toolConfig?: ToolConfig;
  outputConfig?: OutputConfig;
  /** Fields passed to the model as they are (Anthropic's `top_k`, `thinking`). */
  additionalModelRequestFields?: Record<string, unknown>;
}

// ── Answer ───────────────────────────────────────────────────────────────────────────────────

export type StopReason =
  | 'end_turn'
  | 'tool_use'
  | 'max_tokens'
  | 'stop_sequence'
  | 'guardrail_intervened'
  | 'content_filtered'
  | 'model_context_window_exceeded';

export interface TokenUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output?: { message?: { role?: string; content?: ContentBlock[] } };
  stopReason?: StopReason | string;
  usage?: TokenUsage;
  metrics?: { latencyMs?: number };
}

// ── Stream events: each frame's `:event-type` header names it, its payload is the JSON below ──

export interface MessageStartEvent {
  role: 'assistant';
}

export interface ContentBlockStartEvent {
  contentBlockIndex: number;
  start?: { toolUse?: { toolUseId: string; name: string } };
}

export interface ContentBlockDeltaEvent {
  contentBlockIndex: number;
  delta?: {
    text?: string;
    /** A fragment of the arguments' JSON text. */
    toolUse?: { input: string };
    reasoningContent?: { text?: string; signature?: string; redactedContent?: string };
  };
}

export interface ContentBlockStopEvent {
  contentBlockIndex: number;
}

export interface MessageStopEvent {
  stopReason: StopReason | string;
}

export interface MetadataEvent {
  usage: TokenUsage;
  metrics?: { latencyMs?: number };
}

/** The payload of an exception frame (`:message-type: exception`, its kind in `:exception-type`). */
export interface StreamException {
  message?: string;
}
