// Query strings are text: body schemas never coerce types, so numbers in a query are matched as
// digits here and read by the route.
export const LimitParam = { type: 'string', pattern: '^(?:[1-9][0-9]{0,2}|1000)$' } as const;

/** `?limit=` as a number (1 to 1000), or undefined for the list's default. */
export const readLimit = (query: unknown): number | undefined => {
  const limit = (query as { limit?: string } | undefined)?.limit;
  return limit === undefined ? undefined : Number(limit);
};
