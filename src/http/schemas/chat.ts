// POST /v1/chat/completions: the fields the gateway relies on. Everything else passes through
// to the upstream untouched (additionalProperties), as OpenAI-compatible clients expect.
export const ChatCompletionBody = {
  type: 'object',
  required: ['model', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role'],
        properties: { role: { type: 'string', enum: ['system', 'developer', 'user', 'assistant', 'tool', 'function'] } },
      },
    },
    stream: { type: 'boolean' },
    stream_options: { type: ['object', 'null'], properties: { include_usage: { type: 'boolean' } } },
    max_tokens: { type: ['integer', 'null'], minimum: 1 },
    max_completion_tokens: { type: ['integer', 'null'], minimum: 1 },
    n: { type: ['integer', 'null'], minimum: 1, maximum: 1 },
    temperature: { type: ['number', 'null'], minimum: 0, maximum: 2 },
    top_p: { type: ['number', 'null'], minimum: 0, maximum: 1 },
  },
} as const;
