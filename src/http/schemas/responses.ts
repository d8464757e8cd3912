// POST /v1/responses: the fields the gateway reads; everything else goes to the upstream as sent.
export const ResponsesBody = {
  type: 'object',
  required: ['model', 'input'],
  properties: {
    model: { type: 'string', minLength: 1 },
    input: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'object' } }] },
    instructions: { type: ['string', 'null'] },
    stream: { type: ['boolean', 'null'] },
    max_output_tokens: { type: ['integer', 'null'], minimum: 1 },
  },
} as const;
