// What each scenario sends to each target. `direct` and `floor` send the very same request to the
// sandbox (the floor only relays it); the gateway gets the call a client of the gateway would make.
// Scenario names are JSON keys of the results: keep them stable.

export type TargetName = 'direct' | 'floor' | 'gateway';
export const TARGETS: readonly TargetName[] = ['direct', 'floor', 'gateway'];

export interface BenchRequest {
  method: 'POST';
  /** Path and query. */
  path: string;
  headers: Record<string, string>;
  body: string;
  /** The answer counts as whole only if it holds this: the protocol's end marker. */
  endMarker: string;
}

export interface Scenario {
  name: string;
  connections: number;
  /** What direct and floor call, when it is not the gateway's very call. */
  baseline?: string;
  /** Sent to the sandbox by `direct`, and through the bare proxy by `floor`. */
  upstream: BenchRequest;
  gateway: BenchRequest;
}

/** Sweep groups: the scenarios whose figures are set side by side in "How cost grows". */
export interface SweepGroup {
  title: string;
  /** What changes from one scenario to the next, and its value in each. */
  axis: string;
  points: { value: string; scenario: string }[];
}

const SANDBOX_KEY = 'sk-sandbox'; // the sandbox accepts any key; this is what the catalogue's channels send
const json = (value: unknown) => JSON.stringify(value);

const PLAIN_PROMPT = 'hello, how are you today?';
const story = (words: number) => `tell me a story [[words:${words}]]`;

// include_usage on both sides: the gateway always asks the upstream for it, so the sandbox does the same work either way
const chatBody = (content: string, stream: boolean) =>
  json({
    model: 'sandbox-chat',
    messages: [{ role: 'user', content }],
    ...(stream ? { stream: true, stream_options: { include_usage: true } } : { max_tokens: 64 }),
  });
const messagesBody = (model: string) => json({ model, max_tokens: 1024, stream: true, messages: [{ role: 'user', content: story(200) }] });
/**
 * What the gateway sends upstream for messagesBody('sandbox-chat') and geminiBody(), through the pivot
 * (formats/messages/to-pivot.ts, upstreams/openai-chat/to-upstream.ts; usage always asked for).
 */
const translatedChatBody = () =>
  json({ model: 'sandbox-chat', messages: [{ role: 'user', content: story(200) }], max_tokens: 1024, stream: true, stream_options: { include_usage: true } });
/** A Gemini API stream of the same story, for a model on an OpenAI-style channel: the gateway asks for translatedChatBody(). */
const geminiBody = () => json({ contents: [{ role: 'user', parts: [{ text: story(200) }] }], generationConfig: { maxOutputTokens: 1024 } });
/** A chat stream of the same story on the Bedrock channel (no max_tokens: the gateway sends the model's cap). */
export const BEDROCK_CHAT_BODY = json({ model: 'sandbox-bedrock', stream: true, messages: [{ role: 'user', content: story(200) }] });
const SPEECH_BODY = json({
  user: { uid: 'bench' },
  req_params: {
    text: 'The gateway passes speech through as it arrives. Each sentence is its own audio. The last line carries the usage.',
    speaker: 'bench_speaker',
    audio_params: { format: 'mp3', sample_rate: 24000 },
  },
});
const SEARCH_QUERY = 'how an api gateway bills streamed answers';

// Ordinary words, so the gateway's tokenizer sees text like a real prompt, not one endless token.
const VOCABULARY = ['the', 'gateway', 'holds', 'funds', 'before', 'each', 'call', 'and', 'settles', 'them', 'on', 'what', 'was', 'used,', 'nothing', 'more.'];
function promptOfBytes(bytes: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes; i++) {
    const word = VOCABULARY[i % VOCABULARY.length]!;
    parts.push(word);
    length += word.length + 1;
  }
  return parts.join(' ').slice(0, bytes);
}

/** The default scenario of that name, as `gatewayKey` sends it; throws when there is none. */
export function defaultScenario(gatewayKey: string, name: string): Scenario {
  const scenario = buildScenarios(gatewayKey).defaults.find((s) => s.name === name);
  if (!scenario) throw new Error(`no default scenario ${name}`);
  return scenario;
}

/**
 * The scenarios a run measures (`only`'s, or all of its kind) and those that warm its targets first:
 * every one of its kind, whatever `only` picks. A proxy that has served streams and audio costs
 * more a plain call (the floor about 10 %, the gateway no more), so a run of some scenarios measures them as the whole bench does.
 */
export function scenariosOfRun(gatewayKey: string, { sweep, only }: { sweep: boolean; only: string[] }, bedrockBaseline?: BenchRequest) {
  const { defaults, sweep: sweepScenarios, sweepGroups } = buildScenarios(gatewayKey, bedrockBaseline);
  const warmUp = sweep ? sweepScenarios : defaults;
  const chosen = warmUp.filter((s) => only.length === 0 || only.includes(s.name));
  if (chosen.length === 0) throw new Error(`no scenario named ${only.join(', ')}`);
  return { chosen, warmUp, sweepGroups };
}

/**
 * `bedrockBaseline`: the signed upstream request of the chat stream on Bedrock (bedrock-baseline.ts),
 * which only a run with its sandbox can make; without it that scenario is left out.
 */
export function buildScenarios(gatewayKey: string, bedrockBaseline?: BenchRequest): { defaults: Scenario[]; sweep: Scenario[]; sweepGroups: SweepGroup[] } {
  const sandboxJson = { 'content-type': 'application/json' };
  const gatewayJson = { 'content-type': 'application/json', authorization: `Bearer ${gatewayKey}` };
  const openAi = { ...sandboxJson, authorization: `Bearer ${SANDBOX_KEY}` };
  const post = (path: string, headers: Record<string, string>, body: string, endMarker: string): BenchRequest => ({
    method: 'POST',
    path,
    headers,
    body,
    endMarker,
  });

  const chat = (name: string, connections: number, body: string, endMarker: string): Scenario => ({
    name,
    connections,
    upstream: post('/v1/chat/completions', openAi, body, endMarker),
    gateway: post('/v1/chat/completions', gatewayJson, body, endMarker),
  });
  const plainChat = (connections: number) => chat(`chat-plain-c${connections}`, connections, chatBody(PLAIN_PROMPT, false), '"finish_reason"');
  const streamedChat = (words: number, connections: number) =>
    chat(`chat-stream-${words}w-c${connections}`, connections, chatBody(story(words), true), 'data: [DONE]');
  const bigPrompt = (label: string, bytes: number) => chat(`chat-prompt-${label}-c8`, 8, chatBody(promptOfBytes(bytes), false), '"finish_reason"');

  const anthropicVersion = { 'anthropic-version': '2023-06-01' };
  const messagesTranslated: Scenario = {
    name: 'messages-translated-stream-c50',
    connections: 50,
    baseline: 'the chat completions stream the gateway itself asks the sandbox for (the translation is the difference)',
    // Like search: direct and floor make the upstream call the gateway makes. The sandbox's own
    // /v1/messages stream costs the sandbox half as much CPU as its chat stream, and on a machine
    // the two share, that would be counted as the gateway's (docs/benchmarks.md, "The scenarios").
    upstream: post('/v1/chat/completions', openAi, translatedChatBody(), 'data: [DONE]'),
    gateway: post('/v1/messages', { ...gatewayJson, ...anthropicVersion }, messagesBody('sandbox-chat'), 'message_stop'),
  };
  // On an Anthropic channel the same call passes through as it came, read on the side for usage.
  const messagesNative: Scenario = {
    name: 'messages-stream-c50',
    connections: 50,
    upstream: post('/v1/messages', { ...sandboxJson, 'x-api-key': SANDBOX_KEY, ...anthropicVersion }, messagesBody('sandbox-claude'), 'message_stop'),
    gateway: post('/v1/messages', { ...gatewayJson, ...anthropicVersion }, messagesBody('sandbox-claude'), 'message_stop'),
  };
  // The Responses API on an OpenAI channel: passed through, read on the side for usage.
  const responsesBody = json({ model: 'sandbox-chat', input: story(200), max_output_tokens: 1024, stream: true });
  const responsesNative: Scenario = {
    name: 'responses-stream-c50',
    connections: 50,
    upstream: post('/v1/responses', openAi, responsesBody, 'response.completed'),
    gateway: post('/v1/responses', gatewayJson, responsesBody, 'response.completed'),
  };
  const geminiTranslated: Scenario = {
    name: 'gemini-translated-stream-c50',
    connections: 50,
    baseline: 'the chat completions stream the gateway itself asks the sandbox for (the translation is the difference)',
    upstream: post('/v1/chat/completions', openAi, translatedChatBody(), 'data: [DONE]'),
    // the last chunk carries the finish reason and the usage; Gemini's SSE has no end marker of its own
    gateway: post('/v1beta/models/sandbox-chat:streamGenerateContent?alt=sse', gatewayJson, geminiBody(), '"finishReason"'),
  };
  const chatOnBedrock: Scenario[] = bedrockBaseline
    ? [
        {
          name: 'chat-bedrock-stream-c50',
          connections: 50,
          baseline: 'the signed Converse stream the gateway itself asks the sandbox for (the translation and the event-stream decoding are the difference)',
          upstream: bedrockBaseline,
          gateway: post('/v1/chat/completions', gatewayJson, BEDROCK_CHAT_BODY, 'data: [DONE]'),
        },
      ]
    : [];
  const speech: Scenario = {
    name: 'speech-stream-c50',
    connections: 50,
    upstream: post(
      '/api/v3/tts/unidirectional',
      {
        ...sandboxJson,
        'x-api-key': SANDBOX_KEY,
        'x-api-resource-id': 'volc.service_type.10029',
        'x-control-require-usage-tokens-return': 'text_words',
      },
      SPEECH_BODY,
      '20000000',
    ),
    gateway: post('/v1/audio/speech/unidirectional?model=sandbox-tts', gatewayJson, SPEECH_BODY, '20000000'),
  };
  const search: Scenario = {
    name: 'search-c50',
    connections: 50,
    baseline: "the sandbox's /search_api/web_search with the body the gateway sends it",
    // The gateway routes on Type and sends the upstream SearchType and Count instead.
    upstream: post('/search_api/web_search', openAi, json({ Query: SEARCH_QUERY, SearchType: 'web', Count: 10 }), '"LogId"'),
    gateway: post('/v1/search', gatewayJson, json({ Type: 'web', Query: SEARCH_QUERY, Count: 10 }), '"LogId"'),
  };

  // base64, as the openai SDKs ask by default; the gateway passes the body through (its model is the channel's)
  const embeddingsBody = json({ model: 'sandbox-embedding', input: SEARCH_QUERY, encoding_format: 'base64' });
  const embeddings: Scenario = {
    name: 'embeddings-c50',
    connections: 50,
    upstream: post('/v1/embeddings', openAi, embeddingsBody, '"prompt_tokens"'),
    gateway: post('/v1/embeddings', gatewayJson, embeddingsBody, '"prompt_tokens"'),
  };

  const defaults = [
    plainChat(1),
    plainChat(50),
    plainChat(200),
    streamedChat(200, 1),
    streamedChat(200, 50),
    // Most chat and tool-call streams are short: a stream's fixed cost is spread over 64 words here, not 200.
    streamedChat(64, 1),
    streamedChat(64, 50),
    messagesNative,
    messagesTranslated,
    responsesNative,
    geminiTranslated,
    ...chatOnBedrock,
    speech,
    search,
    embeddings,
  ];
  const sweep = [
    plainChat(1),
    plainChat(50),
    plainChat(200),
    streamedChat(20, 50),
    streamedChat(200, 50),
    streamedChat(2000, 50),
    bigPrompt('1kb', 1024),
    bigPrompt('100kb', 100 * 1024),
    bigPrompt('1mb', 1024 * 1024),
  ];
  const sweepGroups: SweepGroup[] = [
    {
      title: 'Connections (plain chat)',
      axis: 'connections',
      points: [1, 50, 200].map((c) => ({ value: String(c), scenario: `chat-plain-c${c}` })),
    },
    {
      title: 'Stream length (streamed chat, 50 connections)',
      axis: 'words streamed',
      points: [20, 200, 2000].map((w) => ({ value: w.toLocaleString('en'), scenario: `chat-stream-${w}w-c50` })),
    },
    {
      title: 'Request size (plain chat, 8 connections)',
      axis: 'prompt',
      points: ['1kb', '100kb', '1mb'].map((size) => ({
        value: size.toUpperCase().replace('KB', ' KB').replace('MB', ' MB'),
        scenario: `chat-prompt-${size}-c8`,
      })),
    },
  ];
  return { defaults, sweep, sweepGroups };
}
