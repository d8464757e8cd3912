// One field of a valid JSON body made invalid — a wrong type, a number past its bound or past any
// double, a missing required field, an unknown enum value — on the synchronous endpoints: always a
// 400 naming the field, never a 5xx, never a hold or a charge.
import fc from 'fast-check';
import { fieldProbes, type JsonEndpoint } from './endpoint.js';
import type { PropertySpec } from './harness.js';
import {
  badBoolean,
  badEnum,
  badInteger,
  badNumber,
  badString,
  type FieldMutation,
  modelMutations,
  modelOfAnotherType,
  mutate,
  REMOVE,
  removeField,
  unknownField,
  unknownModel,
  wrongType,
} from './values.js';

const MAX_OUTPUT_TOKENS = 4096; // the sandbox models' default max_output_tokens
const overModelMax = fc.oneof(fc.integer({ min: MAX_OUTPUT_TOKENS + 1, max: 2 ** 31 - 1 }), fc.constantFrom(2 ** 53, 1e308));
const tokenCap = (field: string, nullable: boolean) => mutate([field], fc.oneof(badInteger({ min: 1, nullable }), overModelMax));
const badUrl = fc.oneof(
  badString(),
  fc.constantFrom(
    'ftp://example.com/x',
    'javascript:alert(1)',
    'http://user:pw@example.com/cb',
    'not a url',
    'http://',
    '//example.com/cb',
    'file:///etc/passwd',
    'https://:443/',
    'http://exa mple.com/',
  ),
);
/** `{ [field]: bad }` set at `parent`, for a field under an object the base does not have. */
const under = (parent: string, field: string, bad: fc.Arbitrary<unknown>): fc.Arbitrary<FieldMutation> =>
  bad.map((value) => ({ path: [parent], value: { [field]: value }, names: [`${parent}.${field}`] }));

const chat: JsonEndpoint = {
  name: 'chat',
  paths: ['/v1/chat/completions'],
  bases: [
    { model: 'sandbox-chat', messages: [{ role: 'user', content: 'hi' }] },
    {
      model: 'sandbox-claude',
      messages: [
        { role: 'system', content: 's' },
        { role: 'user', content: 'hi' },
      ],
      stream: false,
    },
  ],
  mutations: fc.oneof(
    modelMutations('chat'),
    removeField(['messages']),
    mutate(['messages'], fc.oneof(wrongType('array'), fc.constant([]))),
    mutate(['messages', 0], wrongType('object')),
    removeField(['messages', 0, 'role']),
    mutate(['messages', 0, 'role'], badEnum(['system', 'developer', 'user', 'assistant', 'tool', 'function'])),
    mutate(['stream'], badBoolean()),
    mutate(['stream_options'], wrongType('object', 'null')),
    under('stream_options', 'include_usage', badBoolean()),
    tokenCap('max_tokens', true),
    tokenCap('max_completion_tokens', true),
    mutate(['n'], badInteger({ min: 1, max: 1, nullable: true })),
    mutate(['temperature'], badNumber({ min: 0, max: 2, nullable: true })),
    mutate(['top_p'], badNumber({ min: 0, max: 1, nullable: true })),
  ),
};

// Content blocks of a known type with what the block needs missing or wrong.
const badBlock = fc.constantFrom<unknown>(
  { type: 'text' },
  { type: 'text', text: 5 },
  { type: 'image' },
  { type: 'image', source: 'x' },
  { type: 'image', source: { type: 'zzz' } },
  { type: 'image', source: { type: 'url' } },
  { type: 'document' },
  { type: 'document', source: null },
  { type: 'tool_use' },
  { type: 'tool_use', id: 'x', name: 7, input: {} },
  { type: 'tool_use', id: 'x', name: 'f', input: 'x' },
  { type: 'tool_result' },
  { type: 'tool_result', tool_use_id: 3 },
  { type: 'tool_result', tool_use_id: 't', content: [{ type: 'image' }] },
  { type: 'document', source: { type: 'base64', data: 'x' } },
  { type: 'document', source: { type: 'content', content: [{ type: 'text' }] } },
  { text: 'no type' },
  { type: 7 },
);
const messages: JsonEndpoint = {
  name: 'messages',
  paths: ['/v1/messages'],
  headers: { 'anthropic-version': '2023-06-01' },
  bases: ['sandbox-chat', 'sandbox-claude'].map((model) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })),
  mutations: fc.oneof(
    modelMutations('chat'),
    removeField(['max_tokens']),
    mutate(['max_tokens'], fc.oneof(badInteger({ min: 1 }), overModelMax)),
    removeField(['messages']),
    mutate(['messages'], fc.oneof(wrongType('array'), fc.constant([]))),
    mutate(['messages', 0], wrongType('object')),
    removeField(['messages', 0, 'role']),
    mutate(['messages', 0, 'role'], badEnum(['user', 'assistant'])),
    removeField(['messages', 0, 'content']),
    mutate(['messages', 0, 'content'], wrongType('string', 'array')),
    mutate(['messages', 0, 'content'], fc.array(fc.oneof(wrongType('object'), badBlock), { minLength: 1, maxLength: 3 }), ['messages[0].content']),
    mutate(['system'], fc.oneof(wrongType('string', 'array'), fc.array(fc.oneof(wrongType('object'), badBlock), { minLength: 1, maxLength: 2 })), ['system']),
    mutate(['stop_sequences'], fc.oneof(wrongType('array'), fc.array(wrongType('string'), { minLength: 1, maxLength: 3 })), ['stop_sequences']),
    mutate(['stream'], badBoolean()),
    mutate(['temperature'], badNumber({ min: 0, max: 1 })),
    mutate(['top_p'], badNumber({ min: 0, max: 1 })),
    mutate(['top_k'], badInteger({ min: 0 })),
    mutate(
      ['tools'],
      fc.oneof(
        wrongType('array'),
        fc.constantFrom<unknown>([{}], [{ name: '' }], [{ name: 5 }], [{ name: 'x'.repeat(129) }], [{ name: 't', input_schema: 'x' }], ['t']),
      ),
      ['tools'],
    ),
    mutate(
      ['tool_choice'],
      fc.oneof(
        wrongType('object'),
        fc.constantFrom<unknown>({}, { type: 'function' }, { type: 'tool', name: 3 }, { type: 'auto', disable_parallel_tool_use: 'no' }),
      ),
      ['tool_choice'],
    ),
    mutate(
      ['metadata'],
      fc.oneof(
        wrongType('object'),
        wrongType('string', 'null').map((user_id) => ({ user_id })),
      ),
      ['metadata'],
    ),
  ),
};

// The chat translation (an OpenAI-style upstream) cannot send a document by URL.
const messagesViaChat: JsonEndpoint = {
  name: 'messages→chat',
  paths: ['/v1/messages'],
  headers: { 'anthropic-version': '2023-06-01' },
  bases: [{ model: 'sandbox-chat', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }],
  mutations: fc
    .tuple(fc.constantFrom('http', 'https'), fc.nat())
    .map(([scheme, n]) => `${scheme}://example.com/doc-${n}.pdf`)
    .map((url) => ({
      path: ['messages', 0, 'content'],
      value: [{ type: 'document', source: { type: 'url', url } }],
      names: ['messages[0].content[0].source'],
    })),
};

const responses: JsonEndpoint = {
  name: 'responses',
  paths: ['/v1/responses'],
  bases: [
    { model: 'sandbox-chat', input: 'hi' },
    { model: 'sandbox-chat', input: [{ role: 'user', content: 'hi' }], instructions: null },
  ],
  mutations: fc.oneof(
    modelMutations('chat'),
    removeField(['input']),
    mutate(['input'], fc.oneof(wrongType('string', 'array'), fc.array(wrongType('object'), { minLength: 1, maxLength: 3 })), ['input']),
    mutate(['instructions'], wrongType('string', 'null')),
    mutate(['stream'], badBoolean({ nullable: true })),
    tokenCap('max_output_tokens', true),
  ),
};

const unidirectional: JsonEndpoint = {
  name: 'speech/unidirectional',
  paths: ['/v1/audio/speech/unidirectional?model=sandbox-tts'],
  bases: [
    { req_params: { text: 'hello', speaker: 'zh_female_1' } },
    { user: { uid: 'u' }, req_params: { text: '你好', speaker: 's', audio_params: { format: 'mp3' } } },
  ],
  mutations: fc.oneof(
    removeField(['req_params']),
    mutate(['req_params'], wrongType('object')),
    removeField(['req_params', 'text']),
    mutate(['req_params', 'text'], badString()),
    removeField(['req_params', 'speaker']),
    mutate(['req_params', 'speaker'], badString()),
    mutate(['req_params', 'audio_params'], wrongType('object')),
    badBoolean().map((value) => ({
      path: ['req_params', 'audio_params'],
      value: { enable_subtitle: value },
      names: ['req_params.audio_params.enable_subtitle'],
    })),
  ),
};

const openAiSpeech: JsonEndpoint = {
  name: 'speech',
  paths: ['/v1/audio/speech'],
  bases: [
    { model: 'sandbox-tts', input: 'hello', voice: 'alloy' },
    { model: 'sandbox-tts', input: 'hi', voice: 'v', response_format: 'wav', speed: 1.25 },
  ],
  mutations: fc.oneof(
    modelMutations('tts'),
    removeField(['input']),
    mutate(
      ['input'],
      fc.oneof(
        badString(),
        fc.integer({ min: 4097, max: 6000 }).map((n) => 'a'.repeat(n)),
      ),
    ),
    removeField(['voice']),
    mutate(['voice'], badString()),
    mutate(['response_format'], badEnum(['mp3', 'opus', 'pcm', 'wav'])),
    mutate(['speed'], badNumber({ min: 0.5, max: 2 })),
    mutate(['instructions'], wrongType('string')),
    unknownField(['model', 'input', 'voice', 'response_format', 'speed', 'instructions']).map((field) => ({
      path: [field],
      value: 1,
      names: [`${field}: unknown field`],
    })),
  ),
};

const search: JsonEndpoint = {
  name: 'search',
  paths: ['/v1/search'],
  bases: [
    { Type: 'web', Query: 'weather', Count: 5 },
    { Type: 'global', Query: 'news', SearchType: 'web' },
  ],
  mutations: fc.oneof(
    fc.constant({ path: ['Type'], value: REMOVE, names: [], exact: ['model field is required'] }),
    mutate(['Type'], badEnum(['web', 'global'])),
    // Type routes already, so an explicit model is refused unless it is the one Type names.
    fc.constant({ path: ['model'], value: '', names: [], exact: ['model field is required'] }),
    mutate(['model'], fc.oneof(wrongType('string'), unknownModel, modelOfAnotherType('search')), ['model']),
    removeField(['Query']),
    mutate(['Query'], badString()),
    mutate(['Count'], badInteger({ min: 1, max: 50 })),
    mutate(['SearchType'], fc.oneof(badEnum(['web', 'image']), fc.constant('image'))),
  ),
};

const images: JsonEndpoint = {
  name: 'images/async',
  paths: ['/v1/images/async'],
  bases: [
    { model: 'sandbox-image', prompt: 'a cat' },
    { model: 'sandbox-image', prompt: 'a dog', n: 2, size: '512x512', response_format: 'url' },
  ],
  mutations: fc.oneof(
    modelMutations('image'),
    removeField(['prompt']),
    mutate(
      ['prompt'],
      fc.oneof(
        badString(),
        fc.integer({ min: 32_001, max: 40_000 }).map((n) => 'p'.repeat(n)),
      ),
    ),
    mutate(['n'], badInteger({ min: 1, max: 10 })),
    mutate(['size'], badString()),
    mutate(['response_format'], badEnum(['url', 'b64_json'])),
    mutate(['callback_url'], badUrl),
  ),
};

const RUNS = 70;
const ENDPOINTS: [JsonEndpoint, number][] = [
  [chat, RUNS],
  [messages, RUNS],
  [messagesViaChat, 10],
  [responses, RUNS],
  [unidirectional, RUNS],
  [openAiSpeech, RUNS],
  [search, RUNS],
  [images, RUNS],
];

export const jsonFieldProperties: PropertySpec[] = ENDPOINTS.map(([endpoint, numRuns]) => ({
  name: `${endpoint.name}: one invalid field is a 400 naming it`,
  probes: ({ key }) => fieldProbes(endpoint, key),
  numRuns,
}));
