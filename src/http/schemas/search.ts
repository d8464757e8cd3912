// POST /v1/search: Type (or model) routes; Query, Count and SearchType are checked here,
// every other field goes to the upstream as sent.
export const SearchBody = {
  type: 'object',
  required: ['Query'],
  properties: {
    Type: { type: 'string', enum: ['web', 'global'] },
    model: { type: 'string', minLength: 1 },
    Query: { type: 'string', minLength: 1 },
    Count: { type: 'integer', minimum: 1, maximum: 50 },
    SearchType: { type: 'string', enum: ['web', 'image'] },
  },
} as const;
