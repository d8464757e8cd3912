#!/usr/bin/env -S node --max-semi-space-size=64
// The command line: serve | sandbox | migrate | accounts … | keys … | channels … | prices … | reload
// (first, before any other module loads: see the file)
import './tick-object-shape.js';
import { cliProgram, describeFailure } from './cli/program.js';

cliProgram()
  .parseAsync()
  .catch((error: unknown) => {
    process.stderr.write(`tollroute: ${describeFailure(error)}\n`);
    process.exit(1);
  });
