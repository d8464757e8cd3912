// Speech: the native unidirectional body (checked only where billing and routing depend on it)
// and the OpenAI-compatible body.
export const UnidirectionalSpeechBody = {
  type: 'object',
  required: ['req_params'],
  properties: {
    req_params: {
      type: 'object',
      required: ['text', 'speaker'],
      properties: {
        text: { type: 'string', minLength: 1 },
        speaker: { type: 'string', minLength: 1 },
        audio_params: { type: 'object', properties: { enable_subtitle: { type: 'boolean' } } },
      },
    },
  },
} as const;

export const UnidirectionalSpeechQuery = {
  type: 'object',
  properties: { model: { type: 'string' } },
} as const;

export const OpenAiSpeechBody = {
  type: 'object',
  required: ['model', 'input', 'voice'],
  additionalProperties: false,
  properties: {
    model: { type: 'string', minLength: 1 },
    input: { type: 'string', minLength: 1, maxLength: 4096 },
    voice: { type: 'string', minLength: 1 },
    response_format: { type: 'string', enum: ['mp3', 'opus', 'pcm', 'wav'] },
    speed: { type: 'number', minimum: 0.5, maximum: 2 },
    instructions: { type: 'string' },
  },
} as const;
