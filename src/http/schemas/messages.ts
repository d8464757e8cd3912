// POST /v1/messages: the messages format's required fields; the rest is checked by the translator
// or passed to a messages-native upstream as the caller sent it.
export const MessagesBody = {
  type: 'object',
  required: ['model', 'max_tokens', 'messages'],
  properties: {
    model: { type: 'string', minLength: 1 },
    max_tokens: { type: 'integer', minimum: 1 },
    messages: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['role', 'content'],
        properties: {
          role: { type: 'string', enum: ['user', 'assistant'] },
          content: {
            anyOf: [
              { type: 'string' },
              { type: 'array', items: { type: 'object', required: ['type'], properties: { type: { type: 'string' } } } },
            ],
          },
        },
      },
    },
    system: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', required: ['type', 'text'], properties: { type: { const: 'text' }, text: { type: 'string' } } } }] },
    stop_sequences: { type: 'array', items: { type: 'string' } },
    stream: { type: 'boolean' },
    temperature: { type: 'number', minimum: 0, maximum: 1 },
    top_p: { type: 'number', minimum: 0, maximum: 1 },
    top_k: { type: 'integer', minimum: 0 },
    tools: {
      type: 'array',
      items: { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 128 }, input_schema: { type: 'object' } } },
    },
    tool_choice: {
      type: 'object',
      required: ['type'],
      properties: { type: { type: 'string', enum: ['auto', 'any', 'tool', 'none'] }, name: { type: 'string' }, disable_parallel_tool_use: { type: 'boolean' } },
    },
    metadata: { type: 'object', properties: { user_id: { type: ['string', 'null'] } } },
  },
} as const;
