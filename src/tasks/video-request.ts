// POST /v1/videos/generations and the ARK-compatible POST …/contents/generations/tasks (spec 4.4): one body,
// checked here after Fastify's JSON parse, refused with a message naming the field, or returned with the
// gateway's defaults applied. Pure: no I/O, no clock.
import { invalidRequest } from '../errors.js';
import { type Fields, given, isFields, isHttpUrl, isOneOf, oneOf, readBoolean, readEnum, readHttpUrl, readInteger } from './fields.js';

export { MAX_URL_LENGTH } from './fields.js';

export const VIDEO_RESOLUTIONS = ['480p', '720p', '1080p', '768P', '2K'] as const;
export const VIDEO_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'] as const;
export const VIDEO_SERVICE_TIERS = ['default', 'flex'] as const;
export const VIDEO_CONTENT_TYPES = ['text', 'image_url', 'video_url', 'audio_url'] as const;
export const VIDEO_ROLES = ['first_frame', 'last_frame', 'reference_image', 'reference_video', 'reference_audio'] as const;
/**
 * The longest `duration` the gateway lets through. The documented model ranges are 2–12 s (1.0), 4–12 s (1.5
 * pro) and 4–15 s (2.0); which applies depends on the model, so the upstream refuses a length its model
 * cannot make. This bound only keeps the pre-authorisation sane and leaves room for longer models to come.
 */
export const MAX_VIDEO_SECONDS = 60;
export const MAX_SEED = 2 ** 32 - 1;

export type VideoResolution = (typeof VIDEO_RESOLUTIONS)[number];
export type VideoRatio = (typeof VIDEO_RATIOS)[number];
export type VideoServiceTier = (typeof VIDEO_SERVICE_TIERS)[number];
export type VideoRole = (typeof VIDEO_ROLES)[number];
export type ImageRole = 'first_frame' | 'last_frame' | 'reference_image';

/** Media items always carry their role once normalised. */
export type VideoContentItem =
  | { type: 'text'; text: string }
  | { type: 'image_url'; image_url: { url: string }; role: ImageRole }
  | { type: 'video_url'; video_url: { url: string }; role: 'reference_video' }
  | { type: 'audio_url'; audio_url: { url: string }; role: 'reference_audio' };

export interface VideoRequest {
  model: string;
  content: VideoContentItem[];
  resolution: VideoResolution;
  ratio: VideoRatio;
  /** Seconds; -1 lets the model choose. */
  duration: number;
  seed: number;
  generate_audio: boolean;
  return_last_frame: boolean;
  camera_fixed: boolean;
  watermark: boolean;
  service_tier: VideoServiceTier;
  callback_url?: string;
  safety_identifier?: string;
  /** Set by the gateway (never read from the body): the task was created on the ARK-compatible path. */
  created_via?: 'ark';
}

/** The ARK create body (protocols/volcengine-formats.md §2.2). */
export interface ArkVideoCreateBody {
  model: string;
  content: VideoContentItem[];
  resolution: VideoResolution;
  ratio: VideoRatio;
  duration: number;
  seed?: number;
  generate_audio?: false;
  return_last_frame?: true;
  camera_fixed?: true;
  watermark?: true;
  service_tier?: 'flex';
  safety_identifier?: string;
}

const TOP_LEVEL = new Set([
  'model',
  'content',
  'resolution',
  'ratio',
  'duration',
  'seed',
  'generate_audio',
  'return_last_frame',
  'camera_fixed',
  'watermark',
  'service_tier',
  'callback_url',
  'safety_identifier',
]);
const MEDIA_TYPES = ['image_url', 'video_url', 'audio_url'] as const;
const ITEM_FIELDS = new Set(['type', 'text', 'image_url', 'video_url', 'audio_url', 'role']);
const MEDIA_ROLES: Record<Exclude<VideoContentItem['type'], 'text'>, readonly VideoRole[]> = {
  image_url: ['first_frame', 'last_frame', 'reference_image'],
  video_url: ['reference_video'],
  audio_url: ['reference_audio'],
};
const MAX_REFERENCES = { reference_image: 9, reference_video: 3, reference_audio: 3 } as const;
const REFERENCE_NOUN = { reference_image: 'reference images', reference_video: 'reference videos', reference_audio: 'reference audios' } as const;

/**
 * Checks a video creation body and applies the defaults of spec 4.4.
 *
 * Unknown top-level fields are refused, not dropped: the ARK path's callers know ARK's own fields, and some
 * of those change what is made and billed (`frames` overrides `duration`, `draft`, `tools` add web searches,
 * `execution_expires_after`); dropping one silently would return a different video than was asked for.
 * `null` counts as absent for optional fields (clients that serialise every field send it).
 */
export function normaliseVideoRequest(body: unknown): VideoRequest {
  if (!isFields(body)) throw invalidRequest('body: must be a JSON object');
  const model = given(body, 'model');
  if (model === undefined || model === '') throw invalidRequest('model field is required');
  if (typeof model !== 'string') throw invalidRequest('model: must be a string');
  for (const field of Object.keys(body)) {
    if (!TOP_LEVEL.has(field)) throw invalidRequest(`${field}: unknown field`);
  }

  const request: VideoRequest = {
    model,
    content: readContent(given(body, 'content')),
    resolution: readEnum(body, 'resolution', VIDEO_RESOLUTIONS, '720p'),
    ratio: readEnum(body, 'ratio', VIDEO_RATIOS, 'adaptive'),
    duration: readInteger(
      body,
      'duration',
      5,
      (n) => n === -1 || (n >= 1 && n <= MAX_VIDEO_SECONDS),
      `must be -1 or an integer from 1 to ${MAX_VIDEO_SECONDS}`,
    ),
    seed: readInteger(body, 'seed', -1, (n) => n >= -1 && n <= MAX_SEED, `must be an integer from -1 to ${MAX_SEED}`),
    generate_audio: readBoolean(body, 'generate_audio', true),
    return_last_frame: readBoolean(body, 'return_last_frame', false),
    camera_fixed: readBoolean(body, 'camera_fixed', false),
    watermark: readBoolean(body, 'watermark', false),
    service_tier: readEnum(body, 'service_tier', VIDEO_SERVICE_TIERS, 'default'),
  };
  const callbackUrl = readHttpUrl(body, 'callback_url');
  if (callbackUrl !== undefined) request.callback_url = callbackUrl;
  const safetyIdentifier = given(body, 'safety_identifier');
  if (safetyIdentifier !== undefined) {
    if (typeof safetyIdentifier !== 'string') throw invalidRequest('safety_identifier: must be a string');
    if (safetyIdentifier === '') throw invalidRequest('safety_identifier: must not be empty');
    if ([...safetyIdentifier].length > 64) throw invalidRequest('safety_identifier: at most 64 characters');
    request.safety_identifier = safetyIdentifier;
  }
  return request;
}

/**
 * The ARK create body. `callback_url` stays with the gateway, which delivers its own signed webhooks.
 * Resolution, ratio and duration are always sent because the gateway's defaults differ from some models'
 * (1.0 pro makes 1080p by default) and the hold was computed on ours. A flag left at ARK's own default is
 * omitted: some models refuse a flag they do not support (`camera_fixed` on 2.0, `generate_audio` on 1.0)
 * even at its default value, and an omitted default changes nothing.
 */
export function videoUpstreamBody(req: VideoRequest, upstreamModel: string): ArkVideoCreateBody {
  const body: ArkVideoCreateBody = {
    model: upstreamModel,
    content: req.content,
    resolution: req.resolution,
    ratio: req.ratio,
    duration: req.duration,
  };
  if (req.seed !== -1) body.seed = req.seed;
  if (!req.generate_audio) body.generate_audio = false;
  if (req.return_last_frame) body.return_last_frame = true;
  if (req.camera_fixed) body.camera_fixed = true;
  if (req.watermark) body.watermark = true;
  if (req.service_tier === 'flex') body.service_tier = 'flex';
  if (req.safety_identifier !== undefined) body.safety_identifier = req.safety_identifier;
  return body;
}

/** Seconds to hold funds for: the asked length, or the model's longest when the model chooses (-1). */
export function videoHoldSeconds(req: VideoRequest, longestSeconds: number): number {
  return req.duration === -1 ? longestSeconds : req.duration;
}

function readContent(value: unknown): VideoContentItem[] {
  if (value === undefined) throw invalidRequest('content field is required');
  if (!Array.isArray(value)) throw invalidRequest('content: must be an array');
  if (value.length === 0) throw invalidRequest('content: must not be empty');

  const mediaCount = value.filter((item) => isFields(item) && isOneOf(item.type, MEDIA_TYPES)).length;
  const items: VideoContentItem[] = [];
  const seen = { text: 0, first_frame: 0, last_frame: 0, reference_image: 0, reference_video: 0, reference_audio: 0 };
  value.forEach((raw, index) => {
    const item = readItem(raw, `content[${index}]`, mediaCount);
    items.push(item);
    if (item.type === 'text') {
      seen.text += 1;
      return;
    }
    const at = `content[${index}].role`;
    const role = item.role;
    if ((role === 'first_frame' || role === 'last_frame') && seen[role] === 1) throw invalidRequest(`${at}: at most one ${role}`);
    const isFrame = role === 'first_frame' || role === 'last_frame';
    const references = seen.reference_image + seen.reference_video + seen.reference_audio;
    // first-frame, first+last-frame and multimodal-reference are distinct modes upstream (§2.2 input limits)
    if ((isFrame && references > 0) || (!isFrame && seen.first_frame + seen.last_frame > 0)) {
      throw invalidRequest(`${at}: first_frame and last_frame cannot be combined with reference items`);
    }
    seen[role] += 1;
    if (!isFrame && seen[role] > MAX_REFERENCES[role]) {
      throw invalidRequest(`content[${index}]: at most ${MAX_REFERENCES[role]} ${REFERENCE_NOUN[role]}`);
    }
  });

  if (seen.last_frame > 0 && seen.first_frame === 0) {
    throw invalidRequest(`content[${items.findIndex((i) => i.type === 'image_url' && i.role === 'last_frame')}].role: last_frame needs a first_frame`);
  }
  const images = seen.first_frame + seen.last_frame + seen.reference_image;
  if (seen.reference_audio > 0 && images + seen.reference_video === 0) {
    throw invalidRequest('content: audio cannot be the only media; add an image or a video');
  }
  if (seen.text + images === 0) throw invalidRequest('content: needs at least one text or image item');
  return items;
}

function readItem(raw: unknown, at: string, mediaCount: number): VideoContentItem {
  if (!isFields(raw)) throw invalidRequest(`${at}: must be an object`);
  for (const field of Object.keys(raw)) {
    if (!ITEM_FIELDS.has(field)) throw invalidRequest(`${at}.${field}: unknown field`);
  }
  const type = given(raw, 'type');
  if (type === undefined) throw invalidRequest(`${at}.type field is required`);
  if (!isOneOf(type, VIDEO_CONTENT_TYPES)) throw invalidRequest(`${at}.type: ${oneOf(VIDEO_CONTENT_TYPES)}`);
  for (const other of VIDEO_CONTENT_TYPES) {
    if (other !== type && given(raw, other) !== undefined) throw invalidRequest(`${at}.${other}: only for ${other} items`);
  }

  if (type === 'text') {
    if (given(raw, 'role') !== undefined) throw invalidRequest(`${at}.role: only for image_url, video_url and audio_url items`);
    const text = given(raw, 'text');
    if (text === undefined) throw invalidRequest(`${at}.text field is required`);
    if (typeof text !== 'string') throw invalidRequest(`${at}.text: must be a string`);
    if (text.trim() === '') throw invalidRequest(`${at}.text: must not be empty`);
    return { type, text };
  }

  const url = readMediaUrl(raw, type, `${at}.${type}`);
  const role = given(raw, 'role');
  if (role === undefined) {
    // video and audio have one role each; an image may go without one only as the sole media item, where
    // ARK reads it as the first frame (§2.2 image count). Anywhere else its purpose would be a guess.
    if (type === 'video_url') return { type, video_url: { url }, role: 'reference_video' };
    if (type === 'audio_url') return { type, audio_url: { url }, role: 'reference_audio' };
    if (mediaCount === 1) return { type, image_url: { url }, role: 'first_frame' };
    throw invalidRequest(`${at}.role field is required when the request has more than one media item`);
  }
  if (!isOneOf(role, VIDEO_ROLES)) throw invalidRequest(`${at}.role: ${oneOf(VIDEO_ROLES)}`);
  if (!MEDIA_ROLES[type].includes(role)) {
    const allowed = MEDIA_ROLES[type];
    throw invalidRequest(`${at}.role: ${allowed.length === 1 ? `must be ${JSON.stringify(allowed[0])}` : oneOf(allowed)} for ${type} items`);
  }
  if (type === 'image_url') return { type, image_url: { url }, role: role as ImageRole };
  if (type === 'video_url') return { type, video_url: { url }, role: 'reference_video' };
  return { type, audio_url: { url }, role: 'reference_audio' };
}

/** http(s) everywhere, `asset://<id>` everywhere, inline `data:` only for images and audio (§2.2). */
function readMediaUrl(item: Fields, type: 'image_url' | 'video_url' | 'audio_url', at: string): string {
  const media = given(item, type);
  if (media === undefined) throw invalidRequest(`${at} field is required`);
  if (!isFields(media)) throw invalidRequest(`${at}: must be an object`);
  for (const field of Object.keys(media)) {
    if (field !== 'url') throw invalidRequest(`${at}.${field}: unknown field`);
  }
  const url = given(media, 'url');
  if (url === undefined) throw invalidRequest(`${at}.url field is required`);
  if (typeof url !== 'string') throw invalidRequest(`${at}.url: must be a string`);
  const dataPrefix = type === 'image_url' ? 'image' : type === 'audio_url' ? 'audio' : undefined;
  const ok =
    isHttpUrl(url) || /^asset:\/\/\S+$/.test(url) || (dataPrefix !== undefined && new RegExp(`^data:${dataPrefix}/[\\w.+-]+;base64,\\S`, 'i').test(url));
  if (!ok) {
    const kinds = dataPrefix ? `an http(s), data:${dataPrefix}/…;base64 or asset:// URL` : 'an http(s) or asset:// URL';
    throw invalidRequest(`${at}.url: must be ${kinds}`);
  }
  return url;
}
