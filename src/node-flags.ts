// The flags `npm start` gives node for the gateway (package.json's start script names the same;
// test/build/node-flags.test.ts keeps the two equal, and the bench starts the gateway with them).
//
// Semi-spaces of 32 MiB instead of V8's default 16 (V8 rounds the size down to a power of two):
// under load a scavenge comes half as often, so more of the objects of calls in flight die young
// instead of being copied and promoted. Alternated against the default, plain chat: at 50
// connections 4 to 11 % more calls a second in three runs, at 200 from -0.5 to +6 % in two; at one
// connection no change (docs/benchmarks.md, 2026-11-26).
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=32'];
