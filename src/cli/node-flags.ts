// The flags node runs the gateway with: `npm start`, the `tollroute` command's first line, the
// container image and the bench all pass these, and test/cli/node-flags.test.ts keeps them in step.
//
// A young generation of 64 MB a semi-space (Node.js 22's default is 16; Node.js 24 already allows
// 64). Under many calls at once, what the calls in flight hold survives each young collection and
// is copied; with 16 MB a busy gateway collected every 30-40 ms and copied 1-2 MB each time. With 64
// MB it collects a quarter as often: plain chat at 200 connections cost 0.077 ms of CPU a call
// against 0.089 with 16 MB, its p99 latency 40-60 ms against 180-230 (docs/benchmarks.md), for
// about 120 MB more resident memory under load. V8 sizes the young generation once, at start, so
// this cannot be set from inside the process as heap-growth.ts sets its flag. Flags given after
// these on node's command line win.
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
