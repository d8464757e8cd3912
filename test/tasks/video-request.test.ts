// The video creation body (spec 4.4, protocols §2.2): defaults, refusals naming the field, the ARK body.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GatewayError } from '../../src/errors.js';
import { normaliseVideoRequest, videoHoldSeconds, videoUpstreamBody } from '../../src/tasks/video-request.js';

const text = { type: 'text', text: 'a cat yawns at the camera' };
const image = (url: string, role?: string) => ({ type: 'image_url', image_url: { url }, ...(role ? { role } : {}) });
const video = (url: string, role?: string) => ({ type: 'video_url', video_url: { url }, ...(role ? { role } : {}) });
const audio = (url: string, role?: string) => ({ type: 'audio_url', audio_url: { url }, ...(role ? { role } : {}) });
const DEFAULTS = {
  resolution: '720p',
  ratio: 'adaptive',
  duration: 5,
  seed: -1,
  generate_audio: true,
  return_last_frame: false,
  camera_fixed: false,
  watermark: false,
  service_tier: 'default',
};

const refusal = (message: string) => (error: unknown) => {
  assert.ok(error instanceof GatewayError);
  assert.deepEqual({ status: error.status, type: error.type, message: error.message }, { status: 400, type: 'invalid_request_error', message });
  return true;
};

describe('normaliseVideoRequest', () => {
  test('a text-only request gets every default of spec 4.4', () => {
    assert.deepEqual(normaliseVideoRequest({ model: 'sandbox-video', content: [text] }), {
      model: 'sandbox-video',
      content: [text],
      ...DEFAULTS,
    });
  });

  test('a lone image without a role is the first frame', () => {
    assert.deepEqual(normaliseVideoRequest({ model: 'm', content: [text, image('https://x.test/a.png')] }), {
      model: 'm',
      content: [text, image('https://x.test/a.png', 'first_frame')],
      ...DEFAULTS,
    });
  });

  test('a first and a last frame are accepted in either order', () => {
    const content = [image('https://x.test/end.png', 'last_frame'), image('data:image/png;base64,iVBORw0K', 'first_frame'), text];
    assert.deepEqual(normaliseVideoRequest({ model: 'm', content }), { model: 'm', content, ...DEFAULTS });
  });

  test('nine reference images are accepted', () => {
    const content = [text, ...Array.from({ length: 9 }, (_, i) => image(`asset://asset-${i}`, 'reference_image'))];
    assert.deepEqual(normaliseVideoRequest({ model: 'm', content }), { model: 'm', content, ...DEFAULTS });
  });

  test('2.0 references mix images, videos and audio, and video and audio roles are filled in', () => {
    const body = {
      model: 'm',
      content: [
        text,
        image('https://x.test/a.png', 'reference_image'),
        video('https://x.test/v1.mp4'),
        video('asset://v2', 'reference_video'),
        audio('data:audio/wav;base64,UklGR'),
        audio('https://x.test/a2.mp3', 'reference_audio'),
      ],
    };
    assert.deepEqual(normaliseVideoRequest(body), {
      model: 'm',
      content: [
        text,
        image('https://x.test/a.png', 'reference_image'),
        video('https://x.test/v1.mp4', 'reference_video'),
        video('asset://v2', 'reference_video'),
        audio('data:audio/wav;base64,UklGR', 'reference_audio'),
        audio('https://x.test/a2.mp3', 'reference_audio'),
      ],
      ...DEFAULTS,
    });
  });

  test('audio beside a reference video is enough media with a text prompt', () => {
    const content = [text, video('https://x.test/v.mp4', 'reference_video'), audio('https://x.test/a.mp3', 'reference_audio')];
    assert.deepEqual(normaliseVideoRequest({ model: 'm', content }), { model: 'm', content, ...DEFAULTS });
  });

  test('an image alone, with no text, is accepted', () => {
    const content = [image('https://x.test/a.png', 'first_frame')];
    assert.deepEqual(normaliseVideoRequest({ model: 'm', content }), { model: 'm', content, ...DEFAULTS });
  });

  test('every optional field given is kept as given', () => {
    const body = {
      model: 'm',
      content: [text],
      resolution: '2K',
      ratio: '21:9',
      duration: -1,
      seed: 4294967295,
      generate_audio: false,
      return_last_frame: true,
      camera_fixed: true,
      watermark: true,
      service_tier: 'flex',
      callback_url: 'https://hooks.example.com/video?k=1',
      safety_identifier: 'x'.repeat(64),
    };
    assert.deepEqual(normaliseVideoRequest(body), body);
  });

  test('null optional fields count as absent', () => {
    const body = { model: 'm', content: [text], resolution: null, seed: null, callback_url: null, safety_identifier: null };
    assert.deepEqual(normaliseVideoRequest(body), { model: 'm', content: [text], ...DEFAULTS });
  });

  test('a safety_identifier of 64 characters counts code points, not UTF-16 units', () => {
    const id = '😀'.repeat(64);
    assert.deepEqual(normaliseVideoRequest({ model: 'm', content: [text], safety_identifier: id }), {
      model: 'm',
      content: [text],
      ...DEFAULTS,
      safety_identifier: id,
    });
  });

  const m = { model: 'm' };
  const refusals: [string, unknown, string][] = [
    ['a body that is not an object', [text], 'body: must be a JSON object'],
    ['no model', { content: [text] }, 'model field is required'],
    ['an empty model', { model: '', content: [text] }, 'model field is required'],
    ['a model that is not a string', { model: 7, content: [text] }, 'model: must be a string'],
    ['an unknown top-level field', { ...m, content: [text], frames: 121 }, 'frames: unknown field'],
    ['no content', { ...m }, 'content field is required'],
    ['content that is not an array', { ...m, content: text }, 'content: must be an array'],
    ['empty content', { ...m, content: [] }, 'content: must not be empty'],
    ['an item that is not an object', { ...m, content: [text, 'x'] }, 'content[1]: must be an object'],
    ['an item without a type', { ...m, content: [{ text: 'x' }] }, 'content[0].type field is required'],
    [
      'a draft_task item (ARK drafts are not offered)',
      { ...m, content: [{ type: 'draft_task', draft_task: { id: 'cgt-1' } }] },
      'content[0].draft_task: unknown field',
    ],
    ['a type outside the four', { ...m, content: [{ type: 'draft_task' }] }, 'content[0].type: must be one of "text", "image_url", "video_url", "audio_url"'],
    ['an unknown item field', { ...m, content: [{ ...text, detail: 'high' }] }, 'content[0].detail: unknown field'],
    ['a text item without text', { ...m, content: [{ type: 'text' }] }, 'content[0].text field is required'],
    ['a text that is not a string', { ...m, content: [{ type: 'text', text: 5 }] }, 'content[0].text: must be a string'],
    ['a blank text', { ...m, content: [{ type: 'text', text: '  ' }] }, 'content[0].text: must not be empty'],
    ['a role on a text item', { ...m, content: [{ ...text, role: 'first_frame' }] }, 'content[0].role: only for image_url, video_url and audio_url items'],
    [
      'an image_url on a text item',
      { ...m, content: [{ ...text, image_url: { url: 'https://x.test/a.png' } }] },
      'content[0].image_url: only for image_url items',
    ],
    ['a text on an image item', { ...m, content: [{ ...image('https://x.test/a.png'), text: 'x' }] }, 'content[0].text: only for text items'],
    ['an image item without image_url', { ...m, content: [text, { type: 'image_url' }] }, 'content[1].image_url field is required'],
    [
      'an image_url that is a string',
      { ...m, content: [text, { type: 'image_url', image_url: 'https://x.test/a.png' }] },
      'content[1].image_url: must be an object',
    ],
    ['an image_url without url', { ...m, content: [text, { type: 'image_url', image_url: {} }] }, 'content[1].image_url.url field is required'],
    [
      'an unknown field in image_url',
      { ...m, content: [text, { type: 'image_url', image_url: { url: 'https://x.test/a.png', detail: 'low' } }] },
      'content[1].image_url.detail: unknown field',
    ],
    [
      'an ftp image URL',
      { ...m, content: [text, image('ftp://x.test/a.png')] },
      'content[1].image_url.url: must be an http(s), data:image/…;base64 or asset:// URL',
    ],
    [
      'a data URL of the wrong media type for an image',
      { ...m, content: [text, image('data:audio/wav;base64,UklGR')] },
      'content[1].image_url.url: must be an http(s), data:image/…;base64 or asset:// URL',
    ],
    ['a data URL for a video', { ...m, content: [text, video('data:video/mp4;base64,AAAA')] }, 'content[1].video_url.url: must be an http(s) or asset:// URL'],
    [
      'an audio URL that is not a URL',
      { ...m, content: [text, image('https://x.test/a.png', 'reference_image'), audio('a.mp3')] },
      'content[2].audio_url.url: must be an http(s), data:audio/…;base64 or asset:// URL',
    ],
    [
      'a role outside the five',
      { ...m, content: [text, image('https://x.test/a.png', 'cover')] },
      'content[1].role: must be one of "first_frame", "last_frame", "reference_image", "reference_video", "reference_audio"',
    ],
    [
      'a video role on an image',
      { ...m, content: [text, image('https://x.test/a.png', 'reference_video')] },
      'content[1].role: must be one of "first_frame", "last_frame", "reference_image" for image_url items',
    ],
    [
      'a frame role on a video',
      { ...m, content: [text, video('https://x.test/v.mp4', 'first_frame')] },
      'content[1].role: must be "reference_video" for video_url items',
    ],
    [
      'an image role on audio',
      { ...m, content: [text, image('https://x.test/a.png', 'reference_image'), audio('https://x.test/a.mp3', 'reference_image')] },
      'content[2].role: must be "reference_audio" for audio_url items',
    ],
    [
      'a roleless image among other media',
      { ...m, content: [text, image('https://x.test/a.png'), image('https://x.test/b.png', 'last_frame')] },
      'content[1].role field is required when the request has more than one media item',
    ],
    [
      'two first frames',
      { ...m, content: [image('https://x.test/a.png', 'first_frame'), image('https://x.test/b.png', 'first_frame')] },
      'content[1].role: at most one first_frame',
    ],
    [
      'two last frames',
      {
        ...m,
        content: [image('https://x.test/a.png', 'first_frame'), image('https://x.test/b.png', 'last_frame'), image('https://x.test/c.png', 'last_frame')],
      },
      'content[2].role: at most one last_frame',
    ],
    [
      'a last frame without a first frame',
      { ...m, content: [text, image('https://x.test/b.png', 'last_frame')] },
      'content[1].role: last_frame needs a first_frame',
    ],
    [
      'a first frame with a reference image',
      { ...m, content: [image('https://x.test/a.png', 'first_frame'), image('https://x.test/b.png', 'reference_image')] },
      'content[1].role: first_frame and last_frame cannot be combined with reference items',
    ],
    [
      'a reference video before a first frame',
      { ...m, content: [text, video('https://x.test/v.mp4'), image('https://x.test/a.png', 'first_frame')] },
      'content[2].role: first_frame and last_frame cannot be combined with reference items',
    ],
    [
      'ten reference images',
      { ...m, content: [text, ...Array.from({ length: 10 }, (_, i) => image(`asset://a${i}`, 'reference_image'))] },
      'content[10]: at most 9 reference images',
    ],
    [
      'four reference videos',
      { ...m, content: [text, ...Array.from({ length: 4 }, (_, i) => video(`asset://v${i}`))] },
      'content[4]: at most 3 reference videos',
    ],
    [
      'four reference audios',
      { ...m, content: [text, image('asset://a', 'reference_image'), ...Array.from({ length: 4 }, (_, i) => audio(`asset://s${i}`))] },
      'content[5]: at most 3 reference audios',
    ],
    ['audio as the only media', { ...m, content: [text, audio('https://x.test/a.mp3')] }, 'content: audio cannot be the only media; add an image or a video'],
    ['a video with neither text nor image', { ...m, content: [video('https://x.test/v.mp4')] }, 'content: needs at least one text or image item'],
    ['a resolution outside the list', { ...m, content: [text], resolution: '4K' }, 'resolution: must be one of "480p", "720p", "1080p", "768P", "2K"'],
    ['a resolution in the wrong case', { ...m, content: [text], resolution: '720P' }, 'resolution: must be one of "480p", "720p", "1080p", "768P", "2K"'],
    ['a ratio outside the list', { ...m, content: [text], ratio: '2:1' }, 'ratio: must be one of "16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"'],
    ['a duration of 0', { ...m, content: [text], duration: 0 }, 'duration: must be -1 or an integer from 1 to 60'],
    ['a duration of 61', { ...m, content: [text], duration: 61 }, 'duration: must be -1 or an integer from 1 to 60'],
    ['a fractional duration', { ...m, content: [text], duration: 5.5 }, 'duration: must be -1 or an integer from 1 to 60'],
    ['a duration as a string', { ...m, content: [text], duration: '5' }, 'duration: must be -1 or an integer from 1 to 60'],
    ['a seed below -1', { ...m, content: [text], seed: -2 }, 'seed: must be an integer from -1 to 4294967295'],
    ['a seed above 2^32-1', { ...m, content: [text], seed: 4294967296 }, 'seed: must be an integer from -1 to 4294967295'],
    ['generate_audio as a string', { ...m, content: [text], generate_audio: 'true' }, 'generate_audio: must be a boolean'],
    ['return_last_frame as a number', { ...m, content: [text], return_last_frame: 1 }, 'return_last_frame: must be a boolean'],
    ['camera_fixed as a string', { ...m, content: [text], camera_fixed: 'false' }, 'camera_fixed: must be a boolean'],
    ['watermark as a number', { ...m, content: [text], watermark: 0 }, 'watermark: must be a boolean'],
    ['a service tier outside the two', { ...m, content: [text], service_tier: 'scale' }, 'service_tier: must be one of "default", "flex"'],
    ['a callback_url that is not http(s)', { ...m, content: [text], callback_url: 'ftp://hooks.example.com/' }, 'callback_url: must be an http(s) URL'],
    ['a callback_url that is not a URL', { ...m, content: [text], callback_url: 'hooks.example.com' }, 'callback_url: must be an http(s) URL'],
    [
      'a callback_url with credentials',
      { ...m, content: [text], callback_url: 'https://u:p@hooks.example.com/' },
      'callback_url: must not contain credentials',
    ],
    [
      'a callback_url that is too long',
      { ...m, content: [text], callback_url: `https://hooks.example.com/${'a'.repeat(8192)}` },
      'callback_url: at most 8192 characters',
    ],
    ['a safety_identifier that is not a string', { ...m, content: [text], safety_identifier: 42 }, 'safety_identifier: must be a string'],
    ['an empty safety_identifier', { ...m, content: [text], safety_identifier: '' }, 'safety_identifier: must not be empty'],
    ['a safety_identifier of 65 characters', { ...m, content: [text], safety_identifier: 'x'.repeat(65) }, 'safety_identifier: at most 64 characters'],
  ];
  for (const [what, body, message] of refusals) {
    test(`${what} is refused with 400 "${message}"`, () => {
      assert.throws(() => normaliseVideoRequest(body), refusal(message));
    });
  }
});

describe('videoUpstreamBody', () => {
  test('defaults send the upstream model, content and the shape of the video, and no default flags', () => {
    const req = normaliseVideoRequest({ model: 'sandbox-video', content: [text], callback_url: 'https://hooks.example.com/' });
    assert.deepEqual(videoUpstreamBody(req, 'doubao-seedance-2-0-260128'), {
      model: 'doubao-seedance-2-0-260128',
      content: [text],
      resolution: '720p',
      ratio: 'adaptive',
      duration: 5,
    });
  });

  test('flags away from their defaults and the safety identifier are forwarded, the callback is not', () => {
    const req = normaliseVideoRequest({
      model: 'sandbox-video',
      content: [text, image('https://x.test/a.png')],
      resolution: '1080p',
      ratio: '16:9',
      duration: -1,
      seed: 11,
      generate_audio: false,
      return_last_frame: true,
      camera_fixed: true,
      watermark: true,
      service_tier: 'flex',
      callback_url: 'https://hooks.example.com/',
      safety_identifier: 'user-hash',
    });
    assert.deepEqual(videoUpstreamBody(req, 'doubao-seedance-1-5-pro-251215'), {
      model: 'doubao-seedance-1-5-pro-251215',
      content: [text, image('https://x.test/a.png', 'first_frame')],
      resolution: '1080p',
      ratio: '16:9',
      duration: -1,
      seed: 11,
      generate_audio: false,
      return_last_frame: true,
      camera_fixed: true,
      watermark: true,
      service_tier: 'flex',
      safety_identifier: 'user-hash',
    });
  });
});

describe('videoHoldSeconds', () => {
  test('a set duration is held as asked', () => {
    assert.equal(videoHoldSeconds(normaliseVideoRequest({ model: 'm', content: [text], duration: 8 }), 15), 8);
  });

  test("a duration left to the model holds the model's longest video", () => {
    assert.equal(videoHoldSeconds(normaliseVideoRequest({ model: 'm', content: [text], duration: -1 }), 15), 15);
  });
});
