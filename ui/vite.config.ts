import { defineConfig } from "vitest/config";

// The UI is TypeScript on Preact (components written with `h()`, no JSX): nothing to configure
// but the test environment.
export default defineConfig({
  clearScreen: false,
  server: { port: 5173, strictPort: true },
  build: { target: "es2021", outDir: "dist", emptyOutDir: true },
  test: { environment: "jsdom", include: ["src/**/*.test.ts"] },
});
