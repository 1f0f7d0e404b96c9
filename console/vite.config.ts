import { defineConfig } from 'vite';

// Served by the host under /console (host/src/routes/console.ts), so every asset URL starts there.
export default defineConfig({
  base: '/console/',
  // The host's ReDoc brings React 18 to the root node_modules; the console's libraries must share the console's React.
  resolve: { dedupe: ['react', 'react-dom'] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    rolldownOptions: {
      // TanStack Query marks its hooks "use client" for React Server Components; a browser bundle has no use for it.
      onwarn(warning, warn) {
        if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
      },
    },
  },
  oxc: { jsx: { runtime: 'automatic' } },
});
