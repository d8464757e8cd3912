// How much speech an Ogg/Opus stream has carried, read from its page headers as they go by.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { oggOpusPages } from '../../../src/sandbox/ogg.js';
import { OggClock } from '../../../src/upstreams/volc-ast/ogg-clock.js';

// The sandbox's translated speech: OpusHead, OpusTags, then pages of a second (50 packets of 20 ms) each.
const pages = oggOpusPages({ durationMs: 2_500, voice: 'v', targetLanguage: 'en' });

test('the header pages alone carry no speech', () => {
  const clock = new OggClock();
  clock.read(pages[0]!);
  clock.read(pages[1]!);
  assert.deepEqual({ isOgg: clock.isOgg, playedMs: clock.playedMs() }, { isOgg: true, playedMs: 0 });
});

test('each audio page adds its speech, the pre-skip taken off', () => {
  const clock = new OggClock();
  const played = pages.map((page) => {
    clock.read(page);
    return clock.playedMs();
  });
  assert.deepEqual(played, [0, 0, 1_000, 2_000, 2_500]);
});

test('a page header cut between two chunks is read once it is whole', () => {
  const clock = new OggClock();
  const all = Buffer.concat(pages.slice(0, 3));
  const cut = pages[0]!.length + pages[1]!.length + 10; // inside the first audio page's header
  clock.read(all.subarray(0, cut));
  assert.equal(clock.playedMs(), 0);
  clock.read(all.subarray(cut));
  assert.equal(clock.playedMs(), 1_000);
});

test('bytes that are not Ogg say nothing of the time', () => {
  const clock = new OggClock();
  clock.read(Buffer.from('ID3 and then mp3 frames, not Ogg pages'));
  assert.deepEqual({ isOgg: clock.isOgg, playedMs: clock.playedMs() }, { isOgg: false, playedMs: 0 });
});
