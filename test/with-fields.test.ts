import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { withFields } from '../src/with-fields.js';

// V8's own check of two objects' hidden classes, through its natives syntax (enabled for this process).
setFlagsFromString('--allow-natives-syntax');
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean;

describe('withFields', () => {
  it('copies the object with the fields set, and leaves the object as it was', () => {
    const body = { model: 'a', max_tokens: 64 };
    const copy = withFields(body, { model: 'b', stream: false });
    assert.deepEqual(copy, { model: 'b', max_tokens: 64, stream: false });
    assert.deepEqual(body, { model: 'a', max_tokens: 64 });
  });

  it('gives copies of objects of one shape one hidden class, a field added or not, as calls go on', () => {
    const parse = () => JSON.parse('{"model":"m","messages":[],"max_tokens":64}') as Record<string, unknown>;
    const added = () => withFields(parse(), { stream: false });
    const replaced = () => withFields(parse(), { model: 'x' });
    // A spread shares them too until its inline cache is warm; then each copy gets a class of its own.
    for (let i = 0; i < 5_000; i++) {
      added();
      replaced();
    }
    assert.ok(haveSameMap(added(), added()));
    assert.ok(haveSameMap(replaced(), replaced()));
  });
});
