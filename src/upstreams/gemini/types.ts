// The Gemini API's wire types (generateContent and its stream, countTokens), as far as the gateway
// reads and writes them; the names are the API's. Vertex AI takes and gives the same bodies.

export interface InlineData {
  mimeType: string;
  /** base64 */
  data: string;
}

export interface FileData {
  mimeType?: string;
  fileUri: string;
}

export interface FunctionCall {
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export interface FunctionResponse {
  id?: string;
  name: string;
  response?: Record<string, unknown>;
}

/** One of text, inlineData, fileData, functionCall or functionResponse; `thought` marks reasoning. */
export interface Part {
  text?: string;
  thought?: boolean;
  thoughtSignature?: string;
  inlineData?: InlineData;
  fileData?: FileData;
  functionCall?: FunctionCall;
  functionResponse?: FunctionResponse;
  [field: string]: unknown;
}

export interface Content {
  role?: 'user' | 'model' | string;
  parts?: Part[];
}

export interface FunctionDeclaration {
  name: string;
  description?: string;
  /** An OpenAPI-style schema (types in capitals allowed). */
  parameters?: Record<string, unknown>;
  /** A JSON Schema, instead of `parameters`. */
  parametersJsonSchema?: Record<string, unknown>;
}

export interface Tool {
  functionDeclarations?: FunctionDeclaration[];
  [field: string]: unknown;
}

export interface ToolConfig {
  functionCallingConfig?: { mode?: 'AUTO' | 'ANY' | 'NONE' | 'VALIDATED' | string; allowedFunctionNames?: string[] };
}

export interface ThinkingConfig {
  thinkingBudget?: number;
  includeThoughts?: boolean;
  thinkingLevel?: string;
}

export interface GenerationConfig {
  temperature?: number;
  topP?: number;
  topK?: number;
  maxOutputTokens?: number;
  stopSequences?: string[];
  candidateCount?: number;
  responseMimeType?: string;
  responseSchema?: Record<string, unknown>;
  responseJsonSchema?: Record<string, unknown>;
  thinkingConfig?: ThinkingConfig;
  [field: string]: unknown;
}

export interface GenerateContentRequest {
  contents?: Content[];
  systemInstruction?: Content | string;
  tools?: Tool[];
  toolConfig?: ToolConfig;
  generationConfig?: GenerationConfig;
  safetySettings?: unknown[];
  cachedContent?: string;
  [field: string]: unknown;
}

export type FinishReason =
  | 'FINISH_REASON_UNSPECIFIED'
  | 'STOP'
  | 'MAX_TOKENS'
  | 'SAFETY'
  | 'RECITATION'
  | 'LANGUAGE'
  | 'OTHER'
  | 'BLOCKLIST'
  | 'PROHIBITED_CONTENT'
  | 'SPII'
  | 'MALFORMED_FUNCTION_CALL'
  | 'IMAGE_SAFETY'
  | 'UNEXPECTED_TOOL_CALL';

export interface UsageMetadata {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  cachedContentTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  /** Each modality's share of the prompt and of the answer (TEXT, IMAGE, AUDIO, VIDEO, DOCUMENT). */
  promptTokensDetails?: ModalityTokenCount[];
  candidatesTokensDetails?: ModalityTokenCount[];
}

export interface ModalityTokenCount {
  modality?: string;
  tokenCount?: number;
}

export interface Candidate {
  content?: Content;
  finishReason?: FinishReason | string;
  index?: number;
}

export interface GenerateContentResponse {
  candidates?: Candidate[];
  promptFeedback?: { blockReason?: string };
  usageMetadata?: UsageMetadata;
  modelVersion?: string;
  responseId?: string;
}

/** The error body of every Gemini API failure. */
export interface GeminiErrorBody {
  error: { code: number; message: string; status: string };
}
