// A pivot request as a Gemini generateContent request (the Gemini API and Vertex AI alike). Pure.
import { type PivotMessage, type PivotPart, type PivotRequest, type PivotToolChoice, untranslatable } from '../../pivot/types.js';
import { argumentsObjectOf, jsonObjectOf, thinkingBudgetOf } from '../pivot-writing.js';
import type { Content, GenerateContentRequest, GenerationConfig, Part, ToolConfig } from './types.js';

/** Media types of images by URL, read from the URL's extension: Gemini's fileData needs one. */
const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  gif: 'image/gif',
  heic: 'image/heic',
};

export function geminiRequestOf(request: PivotRequest): GenerateContentRequest {
  const out: GenerateContentRequest = { contents: contentsOf(request.messages) };
  if (request.system.length > 0) out.systemInstruction = { parts: request.system.map((text) => ({ text })) };
  if (request.tools && request.tools.length > 0) {
    out.tools = [
      {
        functionDeclarations: request.tools.map((tool) => ({
          name: tool.name,
          ...(tool.description !== undefined && { description: tool.description }),
          // JSON Schema as it is: Gemini reads it in parametersJsonSchema, without its OpenAPI subset's limits
          parametersJsonSchema: tool.parameters ?? { type: 'object', properties: {} },
        })),
      },
    ];
    const config = toolConfigOf(request.toolChoice);
    if (config) out.toolConfig = config;
  }
  const generation = generationConfigOf(request);
  if (Object.keys(generation).length > 0) out.generationConfig = generation;
  return out;
}

function generationConfigOf(request: PivotRequest): GenerationConfig {
  const config: GenerationConfig = {};
  if (request.maxTokens !== undefined) config.maxOutputTokens = request.maxTokens;
  if (request.temperature !== undefined) config.temperature = request.temperature;
  if (request.topP !== undefined) config.topP = request.topP;
  if (request.topK !== undefined) config.topK = request.topK;
  if (request.stop && request.stop.length > 0) config.stopSequences = request.stop;
  if (request.responseFormat) {
    config.responseMimeType = 'application/json';
    if (request.responseFormat.type === 'json_schema') config.responseJsonSchema = request.responseFormat.schema;
  }
  if (request.reasoning) {
    // Gemini 2.5 takes a budget; 0 turns thinking off where the model allows it
    const budget = thinkingBudgetOf(request.reasoning, 0);
    config.thinkingConfig = { thinkingBudget: budget, includeThoughts: budget > 0 };
  }
  return config;
}

/** Gemini has no switch for one call at a time: a request that asks for it gets what Gemini does, which is its choice. */
function toolConfigOf(choice: PivotToolChoice | undefined): ToolConfig | undefined {
  if (choice === undefined || choice === 'auto') return undefined;
  if (choice === 'none') return { functionCallingConfig: { mode: 'NONE' } };
  if (choice === 'required') return { functionCallingConfig: { mode: 'ANY' } };
  return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.name] } };
}

/** Turns of one role in a row are merged: Gemini alternates `user` and `model`, tool results being the user's. */
function contentsOf(messages: PivotMessage[]): Content[] {
  const contents: Content[] = [];
  messages.forEach((message, i) => {
    const role = message.role === 'assistant' ? 'model' : 'user';
    const parts = partsOf(message, `messages[${i}]`);
    if (parts.length === 0) return;
    const last = contents[contents.length - 1];
    if (last?.role === role) last.parts!.push(...parts);
    else contents.push({ role, parts });
  });
  return contents;
}

function partsOf(message: PivotMessage, at: string): Part[] {
  switch (message.role) {
    case 'user':
      return message.content.map((part, j) => partOf(part, `${at}.content[${j}]`));
    case 'tool':
      return [
        { functionResponse: { id: message.toolCallId, name: message.name, response: responseOf(message.content, message.isError === true, `${at}.content`) } },
      ];
    case 'assistant': {
      const parts: Part[] = [];
      // thoughts go back only with the signature Gemini gave them; its own reading of them needs it
      let bareSignature: string | undefined;
      for (const reasoning of message.reasoning ?? []) {
        if (!reasoning.signature) continue;
        if (reasoning.text === '') bareSignature ??= reasoning.signature;
        else parts.push({ text: reasoning.text, thought: true, thoughtSignature: reasoning.signature });
      }
      for (const part of message.content) if (part.type === 'text' && part.text !== '') parts.push({ text: part.text });
      for (const call of message.toolCalls ?? [])
        parts.push({ functionCall: { id: call.id, name: call.name, args: argumentsObjectOf(call.arguments, call.name) } });
      // a signature that came on a part of its own (the turn's first function call, from-upstream.ts)
      // goes back on that part: Gemini refuses a thinking turn's calls without it
      if (bareSignature) {
        const carrier = parts.find((part) => part.functionCall) ?? parts.find((part) => !part.thought);
        if (carrier) carrier.thoughtSignature = bareSignature;
      }
      return parts;
    }
  }
}

function partOf(part: PivotPart, at: string): Part {
  switch (part.type) {
    case 'text':
      return { text: part.text };
    case 'file':
      return { inlineData: { mimeType: part.mediaType, data: part.data } };
    case 'image': {
      if (part.source.kind === 'base64') return { inlineData: { mimeType: part.source.mediaType, data: part.source.data } };
      const extension = /\.([a-z0-9]+)(?:[?#]|$)/i.exec(part.source.url)?.[1]?.toLowerCase() ?? '';
      const mimeType = IMAGE_TYPES[extension];
      if (!mimeType) throw untranslatable(at, "this model's upstream (Gemini) needs an image URL's type, and this URL does not say it: send the image inline");
      return { fileData: { mimeType, fileUri: part.source.url } };
    }
  }
}

/** A tool result as the object functionResponse carries: a JSON object result as it is, anything else as its text. */
function responseOf(content: PivotPart[], isError: boolean, at: string): Record<string, unknown> {
  // an image or file in a result would be lost from the object: refused, never dropped
  const nonText = content.findIndex((part) => part.type !== 'text');
  if (nonText >= 0) throw untranslatable(`${at}[${nonText}]`, "a tool result carries text only to this model's upstream (Gemini)");
  const text = content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  if (isError) return { error: text };
  return jsonObjectOf(text) ?? { content: text };
}
