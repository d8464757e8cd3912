import { audioRoute } from './audio.js';
import { azureRoutes } from './azure.js';
import { bedrockConverseRoute, bedrockConverseStreamRoute } from './bedrock.js';
import { chatRoute } from './chat.js';
import { azureCompletionsRoutes, completionsRoute } from './completions.js';
import { azureEmbeddingsRoutes, embeddingsRoute, withGeminiEmbeddings } from './embeddings.js';
import { eraseSubmitRoute, eraseTaskRoute } from './erase.js';
import { geminiRoutes } from './gemini.js';
import { imageEditsRoute } from './image-edits.js';
import { imagesRoute } from './images.js';
import { mediaRoute } from './media.js';
import { messagesCountTokensRoute, messagesRoute } from './messages.js';
import { larkQueryRoute, larkSubmitRoute, recognitionQueryRoute, recognitionSubmitRoute } from './minutes.js';
import { moderationsRoute } from './moderations.js';
import { rerankRoute } from './rerank.js';
import { noResponsesRoute, responsesRoute } from './responses.js';
import type { SandboxRoute } from './route.js';
import { globalSearchRoute, webSearchRoute } from './search.js';
import { speechRoute } from './speech.js';
import { azureTranscriptionsRoutes, transcriptionsRoute } from './transcriptions.js';
import { vertexTokenRoute } from './vertex-token.js';
import { videoCreateRoute, videoDeleteRoute, videoGetRoute } from './video.js';

/**
 * The same protocol under /noresponses: an upstream that serves chat completions but not the
 * responses API (the catalogue's sandbox-chat-noresponses channel points there).
 */
const withoutResponses = (route: SandboxRoute): SandboxRoute => ({ ...route, path: `/noresponses${route.path}` });

/** Every upstream endpoint the sandbox imitates: a new protocol is one file and one line here. */
export const SANDBOX_ROUTES: readonly SandboxRoute[] = [
  chatRoute,
  messagesRoute,
  messagesCountTokensRoute,
  responsesRoute,
  withoutResponses(chatRoute),
  noResponsesRoute,
  videoCreateRoute,
  videoGetRoute,
  videoDeleteRoute,
  imagesRoute,
  imageEditsRoute,
  larkSubmitRoute,
  larkQueryRoute,
  recognitionSubmitRoute,
  recognitionQueryRoute,
  eraseSubmitRoute,
  eraseTaskRoute,
  mediaRoute,
  audioRoute,
  speechRoute,
  webSearchRoute,
  globalSearchRoute,
  ...azureRoutes(chatRoute, responsesRoute),
  embeddingsRoute,
  ...azureEmbeddingsRoutes,
  transcriptionsRoute,
  ...azureTranscriptionsRoutes,
  ...geminiRoutes.map(withGeminiEmbeddings),
  vertexTokenRoute,
  bedrockConverseRoute,
  bedrockConverseStreamRoute,
  completionsRoute,
  ...azureCompletionsRoutes,
  moderationsRoute,
  rerankRoute,
];
