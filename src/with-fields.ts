// A copy of an object with some fields set, for objects built on every call.
//
// On Node 20 (V8 11.3), once its inline cache is warm, an object spread that adds a key its source
// lacks (`{ ...body, stream: false }` when body has no `stream`) gives each copy a hidden class of its
// own, as a getter in an object literal does. Such classes live in the old generation, and the young
// collector then promotes the call's objects with them, to be freed only by a full collection
// (test/build/hidden-classes.test.ts counts them). Object.assign onto `{}` follows the shared
// transitions of plain objects, so its copies share their hidden classes.

/** `{ ...base, ...fields }`, with hidden classes shared from call to call. */
export function withFields<Base extends object, Fields extends object>(base: Base, fields: Fields): Omit<Base, keyof Fields> & Fields {
  return Object.assign({}, base, fields);
}
