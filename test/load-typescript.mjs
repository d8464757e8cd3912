// Runs the TypeScript sources without a build: `node --import ./test/load-typescript.mjs <file.ts>`.
// Where Node has module.registerHooks (22.15+), the hooks run in the loading thread and keep what
// esbuild made of each file on disk, so a test process starts in about the time the built gateway
// takes; tsx's hooks run on a thread of their own, about a second more CPU for each of the suite's
// processes. Elsewhere (Node 20) this is tsx itself.
// Plain JavaScript: it is what loads the TypeScript.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../', import.meta.url);
const CACHE = fileURLToPath(new URL('node_modules/.cache/tollroute-typescript/', ROOT));
const TRANSFORM = { loader: 'ts', format: 'esm', target: 'es2022', sourcemap: 'inline' };

// V8's compiled code on disk too (Node 22.1+), keyed by each module's text: every test process
// compiles the same gateway and packages, and this spares about a sixth of what that costs.
module.enableCompileCache?.(fileURLToPath(new URL('node_modules/.cache/tollroute-compile/', ROOT)));

if (typeof module.registerHooks !== 'function') {
  await import('tsx/esm');
} else {
  // esbuild as tsx's own dependency: the same transform tsx makes, with no second copy to install.
  const fromTsx = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'));
  const esbuild = fromTsx('esbuild');
  const salt = `${esbuild.version} ${JSON.stringify(TRANSFORM)}`;
  // Stack traces name the .ts file and line, as under tsx.
  process.setSourceMapsEnabled(true);

  /** Keeps a transform for the next process; a cache that cannot be written only costs time. */
  const keep = (cached, code) => {
    try {
      mkdirSync(CACHE, { recursive: true });
      // Written whole and renamed: two test processes may transform the same file at once.
      const partial = `${cached}.${process.pid}`;
      writeFileSync(partial, code);
      renameSync(partial, cached);
    } catch {}
  };

  /** The module's JavaScript: from the cache when this text was transformed before. */
  const javascriptOf = (file) => {
    const text = readFileSync(file, 'utf8');
    const cached = `${CACHE}${createHash('sha1').update(salt).update(file).update(text).digest('hex')}.js`;
    try {
      return readFileSync(cached, 'utf8');
    } catch {}
    const { code } = esbuild.transformSync(text, { ...TRANSFORM, sourcefile: file });
    keep(cached, code);
    return code;
  };

  module.registerHooks({
    // The sources import each other as `./x.js` (NodeNext); outside node_modules that names `./x.ts`.
    resolve(specifier, context, nextResolve) {
      const isPath = specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('file:');
      if (isPath && specifier.endsWith('.js') && context.parentURL?.startsWith('file:')) {
        const url = new URL(`${specifier.slice(0, -3)}.ts`, context.parentURL);
        if (!url.pathname.includes('/node_modules/') && existsSync(url)) return { url: url.href, format: 'module', shortCircuit: true };
      }
      return nextResolve(specifier, context);
    },
    load(url, context, nextLoad) {
      if (!url.startsWith('file:') || !url.endsWith('.ts')) return nextLoad(url, context);
      return { format: 'module', source: javascriptOf(fileURLToPath(url)), shortCircuit: true };
    },
  });
}
