// An example of every request body, by method and path as the document writes them: the value
// "Try it out" on /docs starts from, naming models of the built-in sandbox catalogue, so each one
// works as it stands against a gateway started without channels of its own. A multipart body's
// file field holds the file's name: the page asks for the file itself.

const VIDEO_TASK = { model: 'sandbox-video', content: [{ type: 'text', text: 'A car passes a toll gate at dawn, seen from above.' }] };
const CREDIT = { amount_micros: 5_000_000, note: 'Invoice 1042' };
const KEY_LIMITS = { name: 'backend', rpm: 60, allowed_models: ['sandbox-chat'], daily_cap_micros: 1_000_000 };

export const BODY_EXAMPLES: Readonly<Record<string, unknown>> = {
  'POST /admin/accounts': { name: 'Acme Ltd', credit_micros: 10_000_000 },
  'POST /admin/accounts/{id}/keys': { name: 'server', rpm: 60 },
  'POST /admin/accounts/{id}/test-keys': { name: 'ci' },
  'POST /admin/accounts/{id}/credit': CREDIT,
  'POST /admin/accounts/{id}/test-credit': { ...CREDIT, note: 'Test funds' },
  'POST /admin/plans': { name: 'partner', multiplier: '0.8', models: { 'sandbox-claude': '0.5' } },
  'PUT /admin/accounts/{id}/plan': { plan: null },
  'POST /admin/price-changes': {
    model: 'sandbox-chat',
    price: { input_token: 2_000_000, cached_input_token: 200_000, output_token: 8_000_000 },
    effective_at: '2099-01-01T00:00:00Z',
    note: 'New list prices',
  },
  'POST /admin/redemption-batches': { amount_micros: 5_000_000, count: 10, expires_at: '2099-12-31T23:59:59Z', name: 'Spring promotion' },
  'POST /v1/chat/completions': { model: 'sandbox-chat', messages: [{ role: 'user', content: 'Say hello in three languages.' }] },
  'POST /v1/completions': { model: 'sandbox-chat', prompt: 'A toll road is', max_tokens: 32 },
  'POST /v1/moderations': { model: 'sandbox-moderation', input: 'I will pay the toll at the gate.' },
  'POST /v1/rerank': {
    model: 'sandbox-rerank',
    query: 'how are road tolls paid',
    documents: ['Tolls are paid at the gate or by transponder.', 'The bridge opened in 1932.'],
    top_n: 1,
  },
  'POST /v1/embeddings': { model: 'sandbox-embedding', input: ['A toll road at dawn.', 'A bridge at night.'] },
  'POST /v1/messages': { model: 'sandbox-claude', max_tokens: 256, messages: [{ role: 'user', content: 'Say hello in three languages.' }] },
  'POST /v1/messages/count_tokens': { model: 'sandbox-claude', messages: [{ role: 'user', content: 'Say hello in three languages.' }] },
  'POST /v1beta/models/{id}': { contents: [{ role: 'user', parts: [{ text: 'Say hello in three languages.' }] }] },
  'POST /v1/models/{id}': { contents: [{ role: 'user', parts: [{ text: 'Say hello in three languages.' }] }] },
  'POST /v1/responses': { model: 'sandbox-chat', input: 'Say hello in three languages.' },
  'POST /v1/audio/speech': { model: 'sandbox-tts', input: 'Welcome to tollroute.', voice: 'alloy', response_format: 'mp3' },
  'POST /v1/audio/speech/unidirectional': { req_params: { text: 'Welcome to tollroute.', speaker: 'zh_female_shuangkuaisisi_moon_bigtts' } },
  'POST /v1/audio/translations': { model: 'sandbox-ast', file: 'speech.wav', mode: 's2t', source_language: 'zh', target_language: 'en' },
  'POST /v1/audio/transcriptions': { model: 'sandbox-transcribe', file: 'speech.wav', response_format: 'json', language: 'en' },
  'POST /v1/search': { Type: 'web', Query: 'electronic toll collection', Count: 5 },
  'POST /v1/files': { file: 'notes.txt' },
  'POST /v1/batches': { input_file_id: 'file_0123456789abcdef0123456789abcdef', endpoint: '/v1/chat/completions', completion_window: '24h' },
  'POST /v1/images/async': { model: 'sandbox-image', prompt: 'A toll gate at dawn, watercolour', size: '1024x1024' },
  'POST /v1/images/generations': { model: 'sandbox-image', prompt: 'A toll gate at dawn, watercolour', size: '1024x1024', quality: 'hd' },
  'POST /v1/images/edits': { model: 'sandbox-image', image: 'gate.png', prompt: 'Add a rainbow over the gate' },
  'POST /v1/videos/generations': VIDEO_TASK,
  'POST /api/v3/contents/generations/tasks': VIDEO_TASK,
  'POST /v3/contents/generations/tasks': VIDEO_TASK,
  'POST /api/v1/contents/generations/tasks': VIDEO_TASK,
  'POST /v1/contents/generations/tasks': VIDEO_TASK,
  // The id of a succeeded video task of the account: the one in the example is answered 404.
  'POST /v1/videos/erase-subtitle': { video_task_id: 'vid_0123456789abcdef' },
  'POST /v1/audio/minutes': {
    model: 'vendor-minutes',
    file_url: 'https://example.com/meeting.mp3',
    source_lang: 'en_us',
    features: { summary: true, todos: true },
  },
  'POST /v1/account/session': { api_key: 'tr-your-api-key' },
  'POST /v1/account/webhook-secret/test': { url: 'https://example.com/hooks/tollroute' },
  'POST /v1/account/checkout-sessions': { amount_micros: 20_000_000 },
  // Stripe sends it, signed: an unsigned copy is refused (400), and answered 404 where cards are off.
  'POST /webhooks/stripe': { id: 'evt_1Example', type: 'checkout.session.completed', data: { object: { id: 'cs_test_example' } } },
  'POST /v1/account/keys': KEY_LIMITS,
  // A code of the right shape that no batch holds: answered 404.
  'POST /v1/account/redemptions': { code: 'trc-0123456789ABCDEFGHJKMNPQRS' },
  'PATCH /v1/account/keys/{id}': { name: 'backend (read only)', rpm: 30 },
  'PATCH /v1/account/settings': { low_balance_micros: 2_000_000, webhook_url: 'https://example.com/hooks/tollroute' },
  'PATCH /admin/accounts/{id}': { low_balance_micros: 2_000_000 },
};

/**
 * Examples of the parameters a call needs besides its body, by operation and then by name: the
 * model of the speech call that names it in the query, and the messages call's version header.
 */
export const PARAMETER_EXAMPLES: Readonly<Record<string, Record<string, string>>> = {
  'POST /v1/audio/speech/unidirectional': { model: 'sandbox-tts' },
  'POST /v1/messages': { 'anthropic-version': '2023-06-01' },
  'POST /v1beta/models/{id}': { id: 'sandbox-chat:generateContent' },
  'POST /v1/models/{id}': { id: 'sandbox-chat:generateContent' },
};
