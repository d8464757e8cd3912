// A Gemini generateContent request (provider-formats.md) read into the pivot, for an upstream that
// is not Gemini. Pure. What the pivot cannot carry is refused, naming the field.
import { type PivotMessage, type PivotPart, type PivotRequest, type PivotToolChoice, untranslatable } from '../../pivot/types.js';
import type { Content, GenerateContentRequest, Part } from '../../upstreams/gemini/types.js';

const UPSTREAM = "this model's upstream";

/**
 * generationConfig fields that change the answer and have no equivalent: refused unless absent or
 * their default. `mediaResolution` is dropped, as an image's `detail` is on the OpenAI formats: it
 * changes the resolution the model sees, not what it is asked.
 */
const REFUSED_UNLESS_DEFAULT: [field: string, isDefault: (value: unknown) => boolean][] = [
  ['candidateCount', (value) => value === 1],
  ['frequencyPenalty', (value) => value === 0],
  ['presencePenalty', (value) => value === 0],
  ['seed', () => false],
  ['responseLogprobs', (value) => value === false],
  ['logprobs', (value) => value === 0],
  ['responseModalities', (value) => Array.isArray(value) && value.every((modality) => modality === 'TEXT')],
  ['speechConfig', () => false],
  ['audioTimestamp', (value) => value === false],
  ['enableAffectiveDialog', (value) => value === false],
  ['routingConfig', () => false],
  ['modelSelectionConfig', () => false],
];

const LEVEL: Record<string, NonNullable<PivotRequest['reasoning']>['effort']> = {
  MINIMAL: 'minimal',
  LOW: 'low',
  MEDIUM: 'medium',
  HIGH: 'high',
  XHIGH: 'high',
};

export function pivotRequestOf(body: GenerateContentRequest, { upstreamModel, stream }: { upstreamModel: string; stream: boolean }): PivotRequest {
  // both are Gemini's own: a safety filter another upstream does not run, a cache it does not hold
  if (Array.isArray(body.safetySettings) && body.safetySettings.length > 0) throw untranslatable('safetySettings', `not supported by ${UPSTREAM}`);
  if (typeof body.cachedContent === 'string' && body.cachedContent !== '') throw untranslatable('cachedContent', `not supported by ${UPSTREAM}`);
  const request: PivotRequest = { model: upstreamModel, system: [], messages: [], stream };
  const instruction = body.systemInstruction as Content | string | undefined;
  if (typeof instruction === 'string') request.system.push(instruction);
  else for (const [j, part] of (instruction?.parts ?? []).entries()) request.system.push(systemTextOf(part, `systemInstruction.parts[${j}]`));
  readContents(body.contents ?? [], request);
  readTools(body, request);
  readGenerationConfig(body.generationConfig, request);
  return request;
}

function systemTextOf(part: Part, at: string): string {
  if (typeof part.text !== 'string') throw untranslatable(at, 'system instructions carry text only');
  return part.text;
}

/**
 * Calls without an id get `call_<n>`, n their place among the request's calls; a functionResponse
 * without one answers the earliest unanswered call of its name, as Gemini matches them.
 */
function readContents(contents: Content[], request: PivotRequest): void {
  const unanswered: { id: string; name: string }[] = [];
  let calls = 0;
  contents.forEach((content, i) => {
    const at = `contents[${i}]`;
    const parts = content.parts ?? [];
    if (content.role === 'model') {
      const message: Extract<PivotMessage, { role: 'assistant' }> = { role: 'assistant', content: [] };
      parts.forEach((part, j) => {
        const partAt = `${at}.parts[${j}]`;
        if (part.thought === true) {
          const signature = typeof part.thoughtSignature === 'string' && part.thoughtSignature !== '' ? part.thoughtSignature : undefined;
          message.reasoning = [...(message.reasoning ?? []), { text: part.text ?? '', ...(signature && { signature }) }];
        } else if (part.functionCall) {
          const { id, name, args } = part.functionCall;
          if (typeof name !== 'string') throw untranslatable(`${partAt}.functionCall.name`, 'required');
          const callId = typeof id === 'string' && id !== '' ? id : `call_${calls}`;
          calls += 1;
          unanswered.push({ id: callId, name });
          message.toolCalls = [...(message.toolCalls ?? []), { id: callId, name, arguments: JSON.stringify(args ?? {}) }];
        } else message.content.push(partOf(part, partAt));
      });
      request.messages.push(message);
      return;
    }
    if (content.role !== undefined && content.role !== 'user')
      throw untranslatable(`${at}.role`, `the role ${JSON.stringify(content.role)} cannot be sent to ${UPSTREAM}`);
    // results first: they answer the model turn just before, and the pivot places them there
    const results: PivotMessage[] = [];
    const user: PivotPart[] = [];
    parts.forEach((part, j) => {
      const partAt = `${at}.parts[${j}]`;
      if (!part.functionResponse) {
        user.push(partOf(part, partAt));
        return;
      }
      const { id, name, response } = part.functionResponse;
      const k = unanswered.findIndex((call) => (typeof id === 'string' && id !== '' ? call.id === id : call.name === name));
      const call = k < 0 ? undefined : unanswered.splice(k, 1)[0];
      if (!call) throw untranslatable(`${partAt}.functionResponse.name`, `no earlier unanswered functionCall is named ${JSON.stringify(name)}`);
      results.push({ role: 'tool', toolCallId: call.id, name: call.name, content: [{ type: 'text', text: JSON.stringify(response ?? {}) }] });
    });
    request.messages.push(...results);
    if (user.length > 0) request.messages.push({ role: 'user', content: user });
  });
}

function partOf(part: Part, at: string): PivotPart {
  if (typeof part.text === 'string') return { type: 'text', text: part.text };
  if (part.inlineData) {
    const { mimeType = '', data = '' } = part.inlineData;
    return mimeType.startsWith('image/')
      ? { type: 'image', source: { kind: 'base64', mediaType: mimeType, data } }
      : { type: 'file', mediaType: mimeType, data };
  }
  if (part.fileData) {
    const { mimeType, fileUri } = part.fileData;
    // the pivot carries files by URL only as images
    if (mimeType !== undefined && !mimeType.startsWith('image/')) {
      throw untranslatable(`${at}.fileData`, `only images can be sent by URL to ${UPSTREAM}; send ${JSON.stringify(mimeType)} as inlineData`);
    }
    return { type: 'image', source: { kind: 'url', url: String(fileUri ?? '') } };
  }
  const kind = Object.keys(part).find((key) => key !== 'thoughtSignature' && key !== 'thought') ?? 'part';
  throw untranslatable(`${at}.${kind}`, `${kind} parts cannot be sent to ${UPSTREAM}`);
}

function readTools(body: GenerateContentRequest, request: PivotRequest): void {
  const declarations = (body.tools ?? []).flatMap((tool, i) => {
    // Google's own tools (googleSearch, codeExecution, …) run at Google: another upstream has none of them
    const other = Object.keys(tool).find((key) => key !== 'functionDeclarations');
    if (other !== undefined) throw untranslatable(`tools[${i}].${other}`, `${other} runs at Google only`);
    return tool.functionDeclarations ?? [];
  });
  if (declarations.length > 0) {
    request.tools = declarations.map((declaration) => {
      const parameters = declaration.parametersJsonSchema ?? (declaration.parameters && jsonSchemaOf(declaration.parameters));
      return {
        name: String(declaration.name),
        ...(typeof declaration.description === 'string' && { description: declaration.description }),
        ...(parameters !== undefined && { parameters: parameters as Record<string, unknown> }),
      };
    });
  }
  const config = body.toolConfig?.functionCallingConfig;
  if (!config?.mode || config.mode === 'MODE_UNSPECIFIED') return;
  const names = config.allowedFunctionNames ?? [];
  const choices: Record<string, PivotToolChoice> = { AUTO: 'auto', ANY: 'required', NONE: 'none' };
  const choice = choices[config.mode];
  if (!choice) throw untranslatable('toolConfig.functionCallingConfig.mode', `${JSON.stringify(config.mode)} cannot be sent to ${UPSTREAM}`);
  // ANY of one function is that function; a subset of several has no pivot equivalent
  if (config.mode === 'ANY' && names.length === 1) request.toolChoice = { name: names[0] as string };
  else if (names.length > 0 && names.length < (request.tools?.length ?? 0)) {
    throw untranslatable('toolConfig.functionCallingConfig.allowedFunctionNames', `a subset of the functions cannot be sent to ${UPSTREAM}`);
  } else request.toolChoice = choice;
}

/** Gemini's Schema (an OpenAPI subset, types in capitals) as JSON Schema: the types in lower case. */
function jsonSchemaOf(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'properties' && typeof value === 'object' && value !== null) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, jsonSchemaOf(property)]));
    } else if (key === 'items' || key === 'anyOf') out[key] = jsonSchemaOf(value);
    else out[key] = value;
  }
  return out;
}

function readGenerationConfig(config: GenerateContentRequest['generationConfig'], request: PivotRequest): void {
  if (!config) return;
  const fields = config as Record<string, unknown>;
  for (const [field, isDefault] of REFUSED_UNLESS_DEFAULT) {
    const value = fields[field];
    if (value !== undefined && value !== null && !isDefault(value)) throw untranslatable(`generationConfig.${field}`, `not supported by ${UPSTREAM}`);
  }
  if (typeof config.maxOutputTokens === 'number') request.maxTokens = config.maxOutputTokens;
  if (typeof config.temperature === 'number') request.temperature = config.temperature;
  if (typeof config.topP === 'number') request.topP = config.topP;
  if (typeof config.topK === 'number') request.topK = config.topK;
  if (Array.isArray(config.stopSequences) && config.stopSequences.length > 0) request.stop = config.stopSequences;
  const mime = config.responseMimeType;
  if (mime === 'application/json') {
    const schema = config.responseJsonSchema ?? (config.responseSchema && jsonSchemaOf(config.responseSchema));
    request.responseFormat = schema ? { type: 'json_schema', name: 'response', schema: schema as Record<string, unknown> } : { type: 'json_object' };
  } else if (mime !== undefined && mime !== 'text/plain') {
    throw untranslatable('generationConfig.responseMimeType', `${JSON.stringify(mime)} cannot be sent to ${UPSTREAM}`);
  }
  const thinking = config.thinkingConfig;
  if (!thinking) return;
  if (typeof thinking.thinkingLevel === 'string' && LEVEL[thinking.thinkingLevel]) request.reasoning = { effort: LEVEL[thinking.thinkingLevel] };
  // -1 leaves the budget to the model; 0 turns thinking off, the least the pivot can ask for
  else if (thinking.thinkingBudget === 0) request.reasoning = { effort: 'minimal' };
  else if (typeof thinking.thinkingBudget === 'number' && thinking.thinkingBudget > 0) request.reasoning = { budgetTokens: thinking.thinkingBudget };
}
