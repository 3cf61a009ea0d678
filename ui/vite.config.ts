import { defineConfig } from "vitest/config";

// The UI is plain TypeScript: no framework, nothing to configure but the test environment.
export default defineConfig({
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { target: "es2021", outDir: "dist", emptyOutDir: true },
  test: { environment: "jsdom", include: ["src/**/*.test.ts"] },
});
