import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

// Built into the Python package (app/api/console/static) so the wheel carries it and `sbc api`
// serves it under /console/ on the API's own origin.
const outDir = fileURLToPath(new URL('../app/api/console/static', import.meta.url));

export default defineConfig({
  base: '/console/',
  plugins: [react()],
  build: {
    outDir,
    emptyOutDir: true,
    // no inline scripts or styles: the page's Content-Security-Policy is script-src/style-src 'self'
    assetsInlineLimit: 0,
    sourcemap: false,
  },
  test: {
    environment: 'jsdom',
    include: ['test/**/*.test.{js,jsx}'],
  },
});
