// One shard of the fault matrix, run in its own process by fault-matrix.test.ts: all the gateways
// of a process share its one event loop, so two shards use two cores. Arguments: the shard's
// index, the number of shards, and how many gateways this shard runs cells on side by side. It
// sends its cells' results to the parent over IPC (no 'message' or 'disconnect' listener here: either
// would keep the channel, and so this process, alive once the work is done).
import { startTestGateway } from '../../helpers/gateway.js';
import { matrixConfig } from './matrix.js';
import { planCells, runCells } from './runner.js';

const [shard = 0, shards = 1, workers = 1] = process.argv.slice(2).map(Number);
// every shard plans the same cells in the same order, and takes every `shards`-th one
const mine = planCells().runnable.filter((_, index) => index % shards === shard);
const gateways = await Promise.all(Array.from({ length: workers }, () => startTestGateway(matrixConfig)));
try {
  const results = await runCells(mine, gateways);
  await new Promise<void>((resolve, reject) => process.send!(results, (error: Error | null) => (error ? reject(error) : resolve())));
} finally {
  await Promise.all(gateways.map((gw) => gw.close()));
}
