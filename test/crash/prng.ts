// A seeded PRNG (mulberry32), so a kill loop that fails can be run again with its seed: the same
// seed gives every worker and the killer the same sequence of choices (timing still varies).

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max], both included. */
  int(min: number, max: number): number;
  chance(probability: number): boolean;
  /** One of `choices`, each as likely as its weight. */
  weighted<T>(choices: readonly (readonly [T, number])[]): T;
}

export function mulberry32(seed: number): Random {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (probability) => next() < probability,
    weighted(choices) {
      const total = choices.reduce((sum, [, weight]) => sum + weight, 0);
      let roll = next() * total;
      for (const [value, weight] of choices) {
        roll -= weight;
        if (roll < 0) return value;
      }
      return choices[choices.length - 1]![0];
    },
  };
}

/** An independent stream for one actor of the run (a worker, the killer), derived from the run's seed. */
export function forkRandom(seed: number, actor: number): Random {
  return mulberry32((seed ^ Math.imul(actor + 1, 0x9e3779b9)) >>> 0);
}

/** TOLLROUTE_KILL_SEED as given (decimal or 0x…), else `fallback`. */
export function seedFrom(text: string | undefined, fallback: number): number {
  if (text === undefined || text.trim() === '') return fallback;
  const seed = Number(text.trim());
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error(`TOLLROUTE_KILL_SEED: expected an integer from 0 to 4294967295, got ${text}`);
  return seed;
}
