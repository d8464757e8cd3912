// Builds the account console into dist/dashboard (not dist/console, where the server's own src/console
// compiles), served by the gateway under /dashboard
// (src/http/routes/console.ts). Run as `vite build console`, so this folder is the root.
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/dashboard/',
  // Preact's JSX through esbuild's own transform: no Babel, nothing beyond Vite to install.
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: { alias: { react: 'preact/compat', 'react-dom': 'preact/compat' } },
  build: {
    outDir: '../dist/dashboard',
    emptyOutDir: true,
    // Hashed names under assets/: the gateway serves them as immutable.
    assetsDir: 'assets',
    target: 'es2022',
    reportCompressedSize: true,
  },
});
