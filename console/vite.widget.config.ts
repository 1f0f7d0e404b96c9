import { defineConfig } from 'vite';

// The embeddable chat widget: one classic script (an IIFE, so a script tag on any site runs it without modules),
// written beside the console's files as /console/widget.js. Built after the console, so it keeps the console's output.
export default defineConfig({
  publicDir: false,
  build: {
    outDir: 'dist',
    emptyOutDir: false,
    lib: { entry: 'src/widget/widget.ts', formats: ['iife'], name: 'AgentHostWidget', fileName: () => 'widget.js' },
  },
});
