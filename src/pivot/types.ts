// The one internal shape every chat-like call passes through when its inbound format is not the
// upstream's own (DESIGN §11): each inbound format (src/formats/<name>/) converts to and from it,
// and so does each upstream kind (src/upstreams/<kind>/). Nothing else lives here.
import { type GatewayError, invalidRequest } from '../errors.js';

/** A piece of a message's content. */
export type PivotPart =
  | { type: 'text'; text: string }
  | { type: 'image'; source: PivotMediaSource }
  /** A document (a PDF) or another file, given inline. */
  | { type: 'file'; mediaType: string; data: string; name?: string };

/** Inline bytes (base64, without a `data:` prefix) or a URL the upstream fetches itself. */
export type PivotMediaSource = { kind: 'base64'; mediaType: string; data: string } | { kind: 'url'; url: string };

export interface PivotToolCall {
  id: string;
  name: string;
  /** The arguments as JSON text, as the model wrote them (a JSON object when the model behaved). */
  arguments: string;
}

export type PivotMessage =
  | { role: 'user'; content: PivotPart[] }
  | {
      role: 'assistant';
      content: PivotPart[];
      /** Reasoning the model showed in an earlier turn, with the signature its provider needs back, if any. */
      reasoning?: { text: string; signature?: string }[];
      toolCalls?: PivotToolCall[];
    }
  | {
      role: 'tool';
      toolCallId: string;
      /** The called function's name (Gemini answers a call by name): found from the call when the format lacks it. */
      name: string;
      content: PivotPart[];
      isError?: boolean;
    };

export interface PivotTool {
  name: string;
  description?: string;
  /** JSON Schema of the arguments. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
}

export type PivotToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type PivotResponseFormat = { type: 'json_object' } | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean };

export interface PivotRequest {
  /** The upstream's model id. */
  model: string;
  /** System (and developer) instructions, in order. */
  system: string[];
  messages: PivotMessage[];
  stream: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  tools?: PivotTool[];
  toolChoice?: PivotToolChoice;
  parallelToolCalls?: boolean;
  responseFormat?: PivotResponseFormat;
  /** Extended thinking: a token budget (Anthropic, Gemini) or an effort (OpenAI); either is derived from the other. */
  reasoning?: { effort?: 'minimal' | 'low' | 'medium' | 'high'; budgetTokens?: number };
  /** The end user, for the upstream's abuse tracking. */
  user?: string;
}

/**
 * Why the model stopped. `stop_sequence` only where the upstream says so (chat completions folds it
 * into `stop`); `refusal` for a content filter or safety stop.
 */
export type PivotFinish = 'stop' | 'length' | 'tool_calls' | 'stop_sequence' | 'refusal';

/**
 * Token usage in one set of meanings, whatever the upstream's: `input` counts every prompt token,
 * cached or not (OpenAI's `prompt_tokens`), with the cached reads and cache writes among them;
 * `output` counts every generated token, reasoning included.
 */
export interface PivotUsage {
  input: number;
  output: number;
  cacheRead?: number;
  /** Cache writes of every lifetime; `cacheWrite1h` counts the 1-hour ones among them (Anthropic's split). */
  cacheWrite?: number;
  cacheWrite1h?: number;
  /** Audio and image tokens among `input`, audio tokens among `output`. */
  audioInput?: number;
  imageInput?: number;
  audioOutput?: number;
  reasoning?: number;
  /** Web searches the upstream ran for the answer, each billed apart (Anthropic's server_tool_use). */
  webSearch?: number;
}

/** A whole answer. */
export interface PivotResponse {
  /** The upstream's id of the answer, when it gave one. */
  id?: string;
  text: string;
  reasoning?: { text: string; signature?: string }[];
  toolCalls: PivotToolCall[];
  finish: PivotFinish;
  stopSequence?: string;
  usage?: PivotUsage;
}

/**
 * One step of a streamed answer. Tool call fragments carry `index` (the call's place in the answer):
 * the first fragment of a call has its id and name, later ones argument text only.
 */
export type PivotEvent =
  | { type: 'text'; text: string }
  | { type: 'reasoning'; text: string; signature?: string }
  | { type: 'tool_call'; index: number; id?: string; name?: string; arguments: string }
  | { type: 'finish'; finish: PivotFinish; stopSequence?: string }
  /** Cumulative: a later usage event replaces an earlier one. */
  | { type: 'usage'; usage: PivotUsage }
  /** The upstream's end marker: the answer is whole. */
  | { type: 'done' }
  /** The upstream reported an error in the stream. */
  | { type: 'error'; message: string };

/** Reads an upstream's streamed body into pivot events: bytes in, events out, nothing held but a partial frame. */
export interface PivotStreamDecoder {
  push(chunk: Buffer): PivotEvent[];
  /** The body ended; whatever a complete last frame held. */
  end(): PivotEvent[];
}

/**
 * Writes pivot events as an inbound format's stream. `fail` is called at most once, for an upstream
 * that broke after the caller had bytes; what it returns is the last thing sent.
 */
export interface PivotStreamEncoder {
  push(event: PivotEvent): string;
  fail(message: string): string;
}

/**
 * What a format or kind cannot carry is refused, never dropped: a 400 whose message starts with the
 * field (`tools[0].type: …`), thrown by the pure converters before any upstream is called.
 */
export function untranslatable(param: string, message: string): GatewayError {
  return invalidRequest(`${param}: ${message}`);
}
