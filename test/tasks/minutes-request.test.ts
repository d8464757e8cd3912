// The minutes creation body (spec 4.3) and its two upstream submit bodies (protocols §5.1, §5.2).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { GatewayError } from '../../src/errors.js';
import {
  normaliseMinutesRequest,
  type ServiceMinutesRequest,
  serviceMinutesSubmitBody,
  type VendorMinutesRequest,
  vendorMinutesSubmitBody,
} from '../../src/tasks/minutes-request.js';

const MP3 = 'https://files.example.com/meeting.mp3';
const NO_FEATURES = { summary: false, chapters: false, todos: false, qa: false, translate: false, target_lang: 'en_us' };
const COMMON_DEFAULTS = { file_url: MP3, file_type: 'audio', source_lang: 'zh_cn', number_of_speakers: 0, hot_words: [], need_word_time_series: false };

const refusal = (message: string) => (error: unknown) => {
  assert.ok(error instanceof GatewayError);
  assert.deepEqual({ status: error.status, type: error.type, message: error.message }, { status: 400, type: 'invalid_request_error', message });
  return true;
};
const vendor = (body: object) => normaliseMinutesRequest({ model: 'vendor-minutes', file_url: MP3, ...body }) as VendorMinutesRequest;
const service = (body: object) => normaliseMinutesRequest({ model: 'service-minutes', file_url: MP3, ...body }) as ServiceMinutesRequest;

describe('normaliseMinutesRequest', () => {
  test('vendor-minutes with one feature gets every other default', () => {
    assert.deepEqual(vendor({ features: { summary: true } }), {
      model: 'vendor-minutes',
      ...COMMON_DEFAULTS,
      all_activate: false,
      speaker_identification: true,
      features: { ...NO_FEATURES, summary: true },
    });
  });

  test('service-minutes needs only model and file_url', () => {
    assert.deepEqual(normaliseMinutesRequest({ model: 'service-minutes', file_url: MP3 }), {
      model: 'service-minutes',
      ...COMMON_DEFAULTS,
      speaker_identification: true,
    });
  });

  test('service-minutes drops all_activate and features', () => {
    assert.deepEqual(service({ all_activate: true, features: { summary: false, translate: true } }), {
      model: 'service-minutes',
      ...COMMON_DEFAULTS,
      speaker_identification: true,
    });
  });

  test('service-minutes ignores fields it does not use, even ones that would be wrong for vendor-minutes', () => {
    assert.deepEqual(service({ all_activate: 'yes', features: { target_lang: 'zh_cn', sentiment: true } }), {
      model: 'service-minutes',
      ...COMMON_DEFAULTS,
      speaker_identification: true,
    });
  });

  test('service-minutes always separates speakers, even when asked not to', () => {
    assert.deepEqual(service({ speaker_identification: false }), { model: 'service-minutes', ...COMMON_DEFAULTS, speaker_identification: true });
  });

  test('service-minutes accepts speaker_identification set to true', () => {
    assert.deepEqual(service({ speaker_identification: true }), { model: 'service-minutes', ...COMMON_DEFAULTS, speaker_identification: true });
  });

  test('vendor-minutes with all_activate needs no feature', () => {
    assert.deepEqual(vendor({ all_activate: true }), {
      model: 'vendor-minutes',
      ...COMMON_DEFAULTS,
      all_activate: true,
      speaker_identification: true,
      features: NO_FEATURES,
    });
  });

  test('every field given is kept, hot words split into words', () => {
    const body = {
      model: 'vendor-minutes',
      file_url: 'http://files.example.com/talk',
      file_type: 'video',
      source_lang: 'en_us',
      all_activate: false,
      speaker_identification: false,
      number_of_speakers: 3,
      hot_words: 'Volcengine, tollroute\nARK',
      need_word_time_series: true,
      callback_url: 'https://hooks.example.com/minutes',
      features: { summary: true, chapters: true, todos: true, qa: true, translate: true, target_lang: 'zh_cn' },
    };
    assert.deepEqual(normaliseMinutesRequest(body), { ...body, hot_words: ['Volcengine', 'tollroute', 'ARK'] });
  });

  const inferred: [string, string][] = [
    ['https://files.example.com/a/b/talk.WAV', 'audio'],
    ['https://files.example.com/talk.opus?X-Amz-Signature=abc.mp4', 'audio'],
    ['https://files.example.com/v1/files/f_1/talk.webm', 'video'],
    ['https://files.example.com/meeting.MKV#t=3', 'video'],
  ];
  for (const [fileUrl, fileType] of inferred) {
    test(`file_type is inferred as ${fileType} from the path of ${fileUrl}`, () => {
      assert.equal(vendor({ file_url: fileUrl, all_activate: true }).file_type, fileType);
    });
  }

  test('an explicit file_type wins over the suffix', () => {
    assert.equal(vendor({ file_url: 'https://files.example.com/talk.mp4', file_type: 'audio', all_activate: true }).file_type, 'audio');
  });

  test('translate with no target_lang goes to English from Chinese', () => {
    assert.deepEqual(vendor({ features: { translate: true } }).features, { ...NO_FEATURES, translate: true, target_lang: 'en_us' });
  });

  test('translate with no target_lang goes to Chinese from English', () => {
    assert.deepEqual(vendor({ source_lang: 'en_us', features: { translate: true } }).features, { ...NO_FEATURES, translate: true, target_lang: 'zh_cn' });
  });

  test('question_answer is accepted as the name of the Q&A feature', () => {
    assert.deepEqual(vendor({ features: { question_answer: true } }).features, { ...NO_FEATURES, qa: true });
  });

  test('qa and question_answer may both be given when they agree', () => {
    assert.deepEqual(vendor({ features: { qa: true, question_answer: true } }).features, { ...NO_FEATURES, qa: true });
  });

  test('hot words in the upstream JSON form are read as words, duplicates and blanks dropped', () => {
    assert.deepEqual(vendor({ all_activate: true, hot_words: '[{"word":"火山引擎"},"豆包"," ",{"word":"火山引擎"}]' }).hot_words, ['火山引擎', '豆包']);
  });

  test('hot words split on full-width commas and 、', () => {
    assert.deepEqual(vendor({ all_activate: true, hot_words: '火山引擎，豆包、妙记,,' }).hot_words, ['火山引擎', '豆包', '妙记']);
  });

  test('null optional fields count as absent', () => {
    assert.deepEqual(
      normaliseMinutesRequest({ model: 'service-minutes', file_url: MP3, file_type: null, hot_words: null, features: null, callback_url: null }),
      { model: 'service-minutes', ...COMMON_DEFAULTS, speaker_identification: true },
    );
  });

  const v = { model: 'vendor-minutes', file_url: MP3, all_activate: true };
  const refusals: [string, unknown, string][] = [
    ['a body that is not an object', 'x', 'body: must be a JSON object'],
    ['no model', { file_url: MP3 }, 'model field is required'],
    ['an empty model', { model: '', file_url: MP3 }, 'model field is required'],
    ['another model', { model: 'sandbox-chat', file_url: MP3 }, 'model: must be one of "vendor-minutes", "service-minutes"'],
    ['an unknown field', { ...v, the_service: {} }, 'the_service: unknown field'],
    ['no file_url', { model: 'vendor-minutes', all_activate: true }, 'file_url field is required'],
    ['a file_url that is not http(s)', { ...v, file_url: 'file:///etc/passwd.mp3' }, 'file_url: must be an http(s) URL'],
    ['a file_url that is not a string', { ...v, file_url: ['https://x.test/a.mp3'] }, 'file_url: must be an http(s) URL'],
    ['a file_url with credentials', { ...v, file_url: 'https://u:p@files.example.com/a.mp3' }, 'file_url: must not contain credentials'],
    ['a file_type outside the two', { ...v, file_type: 'mp3' }, 'file_type: must be one of "audio", "video"'],
    [
      'a suffix that says nothing',
      { ...v, file_url: 'https://files.example.com/download?id=7' },
      'file_type: cannot be inferred from the file_url suffix; set it to "audio" or "video"',
    ],
    [
      'an unknown suffix',
      { ...v, file_url: 'https://files.example.com/notes.txt' },
      'file_type: cannot be inferred from the file_url suffix; set it to "audio" or "video"',
    ],
    ['a source_lang outside the two', { ...v, source_lang: 'ja_jp' }, 'source_lang: must be one of "zh_cn", "en_us"'],
    ['all_activate as a string', { ...v, all_activate: 'true' }, 'all_activate: must be a boolean'],
    ['speaker_identification as a number', { ...v, speaker_identification: 1 }, 'speaker_identification: must be a boolean'],
    ['a negative number_of_speakers', { ...v, number_of_speakers: -1 }, 'number_of_speakers: must be an integer of 0 or more'],
    ['a fractional number_of_speakers', { ...v, number_of_speakers: 1.5 }, 'number_of_speakers: must be an integer of 0 or more'],
    ['number_of_speakers as a string', { ...v, number_of_speakers: '2' }, 'number_of_speakers: must be an integer of 0 or more'],
    ['hot_words as a list', { ...v, hot_words: ['a'] }, 'hot_words: must be a string'],
    ['hot_words that start a list but are not JSON', { ...v, hot_words: '[a, b' }, 'hot_words: starts with "[" but is not a JSON list'],
    ['hot_words in JSON holding numbers', { ...v, hot_words: '[1, 2]' }, 'hot_words: a JSON list holds strings or {"word": "…"} objects'],
    ['need_word_time_series as a string', { ...v, need_word_time_series: 'yes' }, 'need_word_time_series: must be a boolean'],
    ['features as a list', { ...v, features: ['summary'] }, 'features: must be an object'],
    ['an unknown feature', { ...v, features: { sentiment: true } }, 'features.sentiment: unknown field'],
    ['a feature as a string', { ...v, features: { summary: 'true' } }, 'features.summary: must be a boolean'],
    ['qa and question_answer disagreeing', { ...v, features: { qa: true, question_answer: false } }, 'features.question_answer: conflicts with features.qa'],
    ['a target_lang outside the two', { ...v, features: { translate: true, target_lang: 'fr_fr' } }, 'features.target_lang: must be one of "zh_cn", "en_us"'],
    ['vendor-minutes with no feature on', { model: 'vendor-minutes', file_url: MP3 }, 'features: vendor-minutes needs all_activate or at least one feature'],
    [
      'vendor-minutes with every feature off',
      { model: 'vendor-minutes', file_url: MP3, all_activate: false, features: { summary: false, target_lang: 'en_us' } },
      'features: vendor-minutes needs all_activate or at least one feature',
    ],
    ['a callback_url that is not http(s)', { ...v, callback_url: 'mailto:a@example.com' }, 'callback_url: must be an http(s) URL'],
  ];
  for (const [what, body, message] of refusals) {
    test(`${what} is refused with 400 "${message}"`, () => {
      assert.throws(() => normaliseMinutesRequest(body), refusal(message));
    });
  }
});

describe('vendorMinutesSubmitBody', () => {
  test('chosen features are enabled with their params, the rest sent as off', () => {
    const req = vendor({ hot_words: '火山引擎', need_word_time_series: true, features: { todos: true, translate: true } });
    assert.deepEqual(vendorMinutesSubmitBody(req), {
      Input: { Offline: { FileURL: MP3, FileType: 'audio' } },
      Params: {
        AllActivate: false,
        SourceLang: 'zh_cn',
        AudioTranscriptionEnable: true,
        AudioTranscriptionParams: { SpeakerIdentification: true, NumberOfSpeaker: 0, NeedWordTimeSeries: true, HotWords: '[{"word":"火山引擎"}]' },
        TranslationEnable: true,
        TranslationParams: { TargetLang: 'en_us' },
        InformationExtractionEnabled: true,
        InformationExtractionParams: { Types: ['todo_list'] },
        SummarizationEnabled: false,
        ChapterEnabled: false,
      },
    });
  });

  test('all_activate sends every ability as enabled', () => {
    const req = vendor({ all_activate: true, source_lang: 'en_us', speaker_identification: false, number_of_speakers: 2 });
    assert.deepEqual(vendorMinutesSubmitBody(req), {
      Input: { Offline: { FileURL: MP3, FileType: 'audio' } },
      Params: {
        AllActivate: true,
        SourceLang: 'en_us',
        AudioTranscriptionEnable: true,
        AudioTranscriptionParams: { SpeakerIdentification: false, NumberOfSpeaker: 2, NeedWordTimeSeries: false },
        TranslationEnable: true,
        TranslationParams: { TargetLang: 'zh_cn' },
        InformationExtractionEnabled: true,
        InformationExtractionParams: { Types: ['todo_list', 'question_answer'] },
        SummarizationEnabled: true,
        SummarizationParams: { Types: ['summary'] },
        ChapterEnabled: true,
      },
    });
  });
});

describe('serviceMinutesSubmitBody', () => {
  test('a Chinese recording asks for speakers and utterances and leaves the language to the model', () => {
    assert.deepEqual(serviceMinutesSubmitBody(service({}), 'req-1'), {
      user: { uid: 'req-1' },
      audio: { url: MP3, format: 'mp3' },
      request: { model_name: 'bigmodel', enable_itn: true, enable_punc: true, enable_speaker_info: true, show_utterances: true },
    });
  });

  test('an English recording with hot words names the language and carries the words in corpus.context', () => {
    const req = service({ source_lang: 'en_us', hot_words: 'tollroute, ARK', need_word_time_series: true });
    assert.deepEqual(serviceMinutesSubmitBody(req, 'req-2'), {
      user: { uid: 'req-2' },
      audio: { url: MP3, format: 'mp3', language: 'en-US' },
      request: {
        model_name: 'bigmodel',
        enable_itn: true,
        enable_punc: true,
        enable_speaker_info: true,
        show_utterances: true,
        corpus: { context: '{"hotwords":[{"word":"tollroute"},{"word":"ARK"}]}' },
      },
    });
  });

  test('a stated number_of_speakers goes to recognition as speaker_number', () => {
    assert.deepEqual(serviceMinutesSubmitBody(service({ number_of_speakers: 3 }), 'req-3').request, {
      model_name: 'bigmodel',
      enable_itn: true,
      enable_punc: true,
      enable_speaker_info: true,
      show_utterances: true,
      speaker_number: 3,
    });
  });

  test('an opus file is sent as ogg with the opus codec', () => {
    assert.deepEqual(serviceMinutesSubmitBody(service({ file_url: 'https://files.example.com/a.opus' }), 'r').audio, {
      url: 'https://files.example.com/a.opus',
      format: 'ogg',
      codec: 'opus',
    });
  });

  test("a file with no telling suffix is sent by its file type's usual container", () => {
    assert.deepEqual(serviceMinutesSubmitBody(service({ file_url: 'https://files.example.com/dl?id=1', file_type: 'video' }), 'r').audio, {
      url: 'https://files.example.com/dl?id=1',
      format: 'mp4',
    });
  });
});
