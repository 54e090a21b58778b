import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

// The service serves the build from `/` (src/http/middleware/webAssets.ts): hashed files in assets/.
export default defineConfig({
  plugins: [preact()],
  build: { outDir: 'dist', emptyOutDir: true, assetsDir: 'assets', sourcemap: false },
});
