import { defineConfig } from 'vitest/config';

// As `nest new` (CLI 12.0.8) writes it, without its vite-tsconfig-paths plugin: this app has no
// tsconfig path aliases, and the plugin's tsconfck asks for TypeScript 5 (`npm ls` reports the
// app's TypeScript 6 as invalid).
export default defineConfig({
  test: {
    globals: true,
    root: './',
    include: ['**/*.spec.ts'],
  },
});
