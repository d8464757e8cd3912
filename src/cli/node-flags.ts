// The flags node runs the gateway with: `npm start`, the `tollroute` command's first line, the
// container image and the bench all pass these, and test/cli/node-flags.test.ts keeps them in step.
//
// A young generation of 64 MB a semi-space (Node.js 22's default is 16; Node.js 24 already allows
// 64). What the calls in flight hold survives each young collection and is copied: with many calls
// at once, a collection of 16 MB came every 30-40 ms and copied 1-2 MB, and plain chat at 200
// connections cost about 13 % more CPU a call (docs/performance.md, "A larger young generation"),
// against about 120 MB less resident memory. V8 sizes the young generation once, at start, so this
// cannot be set from inside the process as heap-growth.ts sets its flag. Flags given after these
// on node's command line win.
export const GATEWAY_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];
