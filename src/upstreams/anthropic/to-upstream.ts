// A pivot request as an Anthropic Messages request (chat-formats.md §1.2). Pure.
import { type PivotMessage, type PivotPart, type PivotRequest, type PivotToolChoice, untranslatable } from '../../pivot/types.js';
import { argumentsObjectOf, thinkingBudgetOf } from '../pivot-writing.js';
import type { ContentBlockParam, CustomTool, MessageParam, MessagesRequest, ToolChoice } from './types.js';

/** Messages asks for max_tokens on every call: the caller's pivot carries the model's cap when it named none. */
export function messagesRequestOf(request: PivotRequest): MessagesRequest {
  if (request.maxTokens === undefined) throw new Error('a messages upstream needs max_tokens: the route sets the model cap');
  const out: MessagesRequest = { model: request.model, max_tokens: request.maxTokens, messages: messagesOf(request.messages) };
  if (request.system.length > 0) out.system = request.system.join('\n\n');
  if (request.temperature !== undefined) out.temperature = request.temperature;
  if (request.topP !== undefined) out.top_p = request.topP;
  if (request.topK !== undefined) out.top_k = request.topK;
  if (request.stop && request.stop.length > 0) out.stop_sequences = request.stop;
  if (request.user !== undefined) out.metadata = { user_id: request.user };
  if (request.tools && request.tools.length > 0) {
    out.tools = request.tools.map((tool) => ({
      name: tool.name,
      ...(tool.description !== undefined && { description: tool.description }),
      input_schema: (tool.parameters ?? { type: 'object', properties: {} }) as CustomTool['input_schema'],
      ...(tool.strict !== undefined && { strict: tool.strict }),
    }));
    const choice = toolChoiceOf(request.toolChoice, request.parallelToolCalls);
    if (choice) out.tool_choice = choice;
  }
  // Messages has no JSON mode: a forced tool could stand in, but its answer would be a tool call, not text
  if (request.responseFormat) throw untranslatable('response_format', "this model's upstream (Anthropic messages) has no JSON mode");
  if (request.reasoning) {
    const budget = thinkingBudgetOf(request.reasoning);
    // the budget must stay under max_tokens, or Anthropic refuses the call
    if (budget >= request.maxTokens) throw untranslatable('max_tokens', `must exceed the thinking budget (${budget} tokens) on this model's upstream`);
    out.thinking = { type: 'enabled', budget_tokens: budget };
  }
  out.stream = request.stream;
  return out;
}

function toolChoiceOf(choice: PivotToolChoice | undefined, parallel: boolean | undefined): ToolChoice | undefined {
  const disable = parallel === false ? { disable_parallel_tool_use: true } : {};
  if (choice === undefined) return parallel === false ? { type: 'auto', ...disable } : undefined;
  if (choice === 'none') return { type: 'none' };
  if (choice === 'auto') return { type: 'auto', ...disable };
  if (choice === 'required') return { type: 'any', ...disable };
  return { type: 'tool', name: choice.name, ...disable };
}

/**
 * Tool results go in a user turn, before its own content; consecutive turns of one role are merged,
 * as Messages wants the roles to alternate.
 */
function messagesOf(messages: PivotMessage[]): MessageParam[] {
  const out: MessageParam[] = [];
  for (const message of messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const blocks = blocksOf(message);
    if (blocks.length === 0) continue;
    const last = out[out.length - 1];
    if (last?.role === role) (last.content as ContentBlockParam[]).push(...blocks);
    else out.push({ role, content: blocks });
  }
  return out;
}

function blocksOf(message: PivotMessage): ContentBlockParam[] {
  switch (message.role) {
    case 'user':
      return message.content.map(blockOf);
    case 'tool':
      return [
        {
          type: 'tool_result',
          tool_use_id: message.toolCallId,
          content: message.content.map(blockOf) as Extract<ContentBlockParam, { type: 'tool_result' }>['content'],
          ...(message.isError && { is_error: true }),
        },
      ];
    case 'assistant': {
      const blocks: ContentBlockParam[] = [];
      // Thinking goes back only with the signature Anthropic gave it; any other reasoning it would refuse.
      for (const reasoning of message.reasoning ?? []) {
        if (reasoning.signature) blocks.push({ type: 'thinking', thinking: reasoning.text, signature: reasoning.signature });
      }
      for (const part of message.content) if (part.type === 'text' && part.text !== '') blocks.push({ type: 'text', text: part.text });
      for (const call of message.toolCalls ?? [])
        blocks.push({ type: 'tool_use', id: call.id, name: call.name, input: argumentsObjectOf(call.arguments, call.name) });
      return blocks;
    }
  }
}

function blockOf(part: PivotPart): ContentBlockParam {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return {
        type: 'image',
        source:
          part.source.kind === 'base64'
            ? { type: 'base64', media_type: part.source.mediaType as 'image/png', data: part.source.data }
            : { type: 'url', url: part.source.url },
      };
    case 'file':
      if (part.mediaType !== 'application/pdf') throw untranslatable('file', `${part.mediaType} files cannot be sent to this model's upstream (PDF only)`);
      return { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: part.data }, ...(part.name && { title: part.name }) };
  }
}
