// A pivot request as a Bedrock Converse body (the model id and streaming are the path's). Pure.
import { type PivotMessage, type PivotPart, type PivotRequest, type PivotToolChoice, untranslatable } from '../../pivot/types.js';
import { argumentsObjectOf, jsonObjectOf, thinkingBudgetOf } from '../pivot-writing.js';
import type { ContentBlock, ConverseRequest, ImageFormat, MediaBlock, Message, ToolChoice, ToolConfig, ToolResultContent } from './types.js';

const UPSTREAM = "this model's upstream (Bedrock Converse)";

const IMAGE_FORMATS: Record<string, ImageFormat> = {
  'image/png': 'png',
  'image/jpeg': 'jpeg',
  'image/jpg': 'jpeg',
  'image/gif': 'gif',
  'image/webp': 'webp',
};

export function converseRequestOf(request: PivotRequest): ConverseRequest {
  const messages = messagesOf(request.messages);
  const out: ConverseRequest = { messages };
  if (request.system.length > 0) out.system = request.system.map((text) => ({ text }));
  const inference = {
    ...(request.maxTokens !== undefined && { maxTokens: request.maxTokens }),
    ...(request.temperature !== undefined && { temperature: request.temperature }),
    ...(request.topP !== undefined && { topP: request.topP }),
    ...(request.stop && request.stop.length > 0 && { stopSequences: request.stop }),
  };
  if (Object.keys(inference).length > 0) out.inferenceConfig = inference;
  const toolConfig = toolConfigOf(request, holdsToolBlocks(messages));
  if (toolConfig) out.toolConfig = toolConfig;
  if (request.responseFormat?.type === 'json_object') {
    throw untranslatable('response_format', `${UPSTREAM} constrains output only by a JSON schema: send json_schema`);
  }
  if (request.responseFormat?.type === 'json_schema') {
    const { name, schema } = request.responseFormat;
    // Converse takes the schema as JSON text, not as an object
    out.outputConfig = { textFormat: { type: 'json_schema', structure: { jsonSchema: { schema: JSON.stringify(schema), name } } } };
  }
  const additional = additionalFieldsOf(request);
  if (additional) out.additionalModelRequestFields = additional;
  // `user` has no Converse field; it names the caller for abuse tracking and changes nothing of the answer
  return out;
}

/** What Converse has no field for goes to the model as it is, in the names Anthropic's models on Bedrock read. */
function additionalFieldsOf(request: PivotRequest): Record<string, unknown> | undefined {
  const fields: Record<string, unknown> = {};
  if (request.topK !== undefined) fields.top_k = request.topK;
  if (request.reasoning) {
    const budget = thinkingBudgetOf(request.reasoning);
    // the budget must stay under maxTokens, or the model refuses the call
    if (request.maxTokens !== undefined && budget >= request.maxTokens) {
      throw untranslatable('max_tokens', `must exceed the thinking budget (${budget} tokens) on ${UPSTREAM}`);
    }
    fields.thinking = { type: 'enabled', budget_tokens: budget };
  }
  return Object.keys(fields).length > 0 ? fields : undefined;
}

function toolConfigOf(request: PivotRequest, conversationHasToolBlocks: boolean): ToolConfig | undefined {
  const tools = request.tools ?? [];
  if (tools.length === 0) return undefined;
  if (request.parallelToolCalls === false) throw untranslatable('parallel_tool_calls', `${UPSTREAM} cannot be told to call one tool at a time`);
  if (request.toolChoice === 'none') {
    // Converse has no "none". Without toolConfig the model knows no tools and so calls none, which is
    // exactly "none"; but Converse wants toolConfig whenever the conversation holds tool calls or results,
    // and with it the model could call one: refused rather than let the choice be ignored.
    if (!conversationHasToolBlocks) return undefined;
    throw untranslatable('tool_choice', `"none" cannot be sent to ${UPSTREAM} in a conversation that holds tool calls: leave out the tools instead`);
  }
  const config: ToolConfig = {
    tools: tools.map((tool) => ({
      toolSpec: {
        name: tool.name,
        ...(tool.description !== undefined && { description: tool.description }),
        inputSchema: { json: tool.parameters ?? { type: 'object', properties: {} } },
        ...(tool.strict !== undefined && { strict: tool.strict }),
      },
    })),
  };
  const choice = toolChoiceOf(request.toolChoice);
  if (choice) config.toolChoice = choice;
  return config;
}

function toolChoiceOf(choice: Exclude<PivotToolChoice, 'none'> | undefined): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  if (choice === 'auto') return { auto: {} };
  if (choice === 'required') return { any: {} };
  return { tool: { name: choice.name } };
}

const holdsToolBlocks = (messages: Message[]) => messages.some((m) => m.content.some((block) => block.toolUse ?? block.toolResult));

/**
 * Tool results go in a user turn; consecutive turns of one role are merged, as Converse wants the
 * roles to alternate.
 */
function messagesOf(messages: PivotMessage[]): Message[] {
  const out: Message[] = [];
  const documents = { count: 0 };
  messages.forEach((message, i) => {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message, `messages[${i}]`, documents);
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last?.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  });
  return out;
}

function blocksOf(message: PivotMessage, at: string, documents: { count: number }): ContentBlock[] {
  switch (message.role) {
    case 'user':
      return message.content.map((part, j) => blockOf(part, `${at}.content[${j}]`, documents));
    case 'tool':
      return [
        {
          toolResult: {
            toolUseId: message.toolCallId,
            content: toolResultContentOf(message.content, `${at}.content`, documents),
            ...(message.isError && { status: 'error' as const }),
          },
        },
      ];
    case 'assistant': {
      const blocks: ContentBlock[] = [];
      // reasoning goes back only with its signature: the model checks it, and refuses reasoning without one
      for (const reasoning of message.reasoning ?? []) {
        if (reasoning.signature) blocks.push({ reasoningContent: { reasoningText: { text: reasoning.text, signature: reasoning.signature } } });
      }
      message.content.forEach((part, j) => {
        if (part.type !== 'text') throw untranslatable(`${at}.content[${j}]`, `an assistant turn carries text only on ${UPSTREAM}`);
        // Converse refuses a blank text block
        if (part.text !== '') blocks.push({ text: part.text });
      });
      for (const call of message.toolCalls ?? [])
        blocks.push({ toolUse: { toolUseId: call.id, name: call.name, input: argumentsObjectOf(call.arguments, call.name, UPSTREAM) } });
      return blocks;
    }
  }
}

/** A JSON object result as `json`, so the model reads structure; anything else as the parts it is. */
function toolResultContentOf(parts: PivotPart[], at: string, documents: { count: number }): ToolResultContent[] {
  if (parts.length > 0 && parts.every((part) => part.type === 'text')) {
    const value = jsonObjectOf(parts.map((part) => part.text).join(''));
    if (value !== undefined) return [{ json: value }];
  }
  return parts.map((part, j) => blockOf(part, `${at}[${j}]`, documents));
}

function blockOf(part: PivotPart, at: string, documents: { count: number }): MediaBlock {
  switch (part.type) {
    case 'text':
      return { text: part.text };
    case 'image': {
      if (part.source.kind === 'url') throw untranslatable(`${at}.image_url`, 'Bedrock takes images inline: send base64');
      const format = IMAGE_FORMATS[part.source.mediaType.toLowerCase()];
      if (!format) throw untranslatable(`${at}.image`, `${part.source.mediaType} images cannot be sent to ${UPSTREAM} (png, jpeg, gif or webp)`);
      return { image: { format, source: { bytes: part.source.data } } };
    }
    case 'file':
      if (part.mediaType !== 'application/pdf') throw untranslatable(`${at}.file`, `${part.mediaType} files cannot be sent to ${UPSTREAM} (PDF only)`);
      documents.count += 1;
      return { document: { format: 'pdf', name: documentNameOf(part.name, documents.count), source: { bytes: part.data } } };
  }
}

/**
 * Converse requires a document name of letters, digits, single spaces, hyphens, parentheses and square
 * brackets (1–200 characters): anything else in the caller's file name becomes a hyphen.
 */
function documentNameOf(name: string | undefined, nth: number): string {
  const cleaned = (name ?? '')
    .replace(/[^A-Za-z0-9\s\-()[\]]/g, '-')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 200);
  return cleaned === '' ? `document-${nth}` : cleaned;
}
