// The package's version, read once: src/ and dist/ are both one level below package.json. A bundle
// of the gateway (the kill-loop test runs one from a temporary folder) has no package.json beside
// it: the version then says so rather than the gateway failing to start.
import { readFileSync } from 'node:fs';

function readVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

export const PACKAGE_VERSION = readVersion();
