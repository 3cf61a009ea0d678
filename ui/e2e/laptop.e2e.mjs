// The app on an office laptop's screen, 1366 × 768 (tests/e2e/run.sh's second Xvfb): the window
// opens within the screen with room for a title bar, and the dashboard reads whole at that size.
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { browser, dashboardReads, launch, shot, waitRow, waitText } from "./driver.mjs";

/** Room the window leaves for its title bar and frame (kluis-desktop's `window::FRAME`). */
const TITLE_BAR = 48;

before(async () => {
  await launch();
});

after(async () => {
  await browser?.deleteSession();
});

test("on a 1366 × 768 screen the window opens within it, title bar and all, and the dashboard reads whole", async () => {
  await waitText("demo-badge", "Demo");
  await waitRow("dash-demo-de-vries", "Copies 1/2");
  const screen = await browser.execute(() => ({ width: window.screen.width, height: window.screen.height }));
  assert.deepEqual(screen, { width: 1366, height: 768 }, "the laptop's screen (run by tests/e2e/run.sh)");
  const { x, y, width, height } = await browser.getWindowRect();
  // Xvfb has no window manager to draw a title bar, so the window is measured with the room
  // one takes: the app's own size (1100 × 760) would put its bottom under a taskbar.
  assert.ok(x >= 0 && y >= 0 && x + width <= screen.width && y + height <= screen.height, `the window ${width} × ${height} at ${x},${y} is on the screen`);
  assert.ok(height + TITLE_BAR <= screen.height && width <= screen.width, `the window ${width} × ${height} and a title bar fit ${screen.width} × ${screen.height}`);
  assert.ok(width >= 1000 && height >= 600, `the window uses the screen: ${width} × ${height}`);
  await shot("00-dashboard-laptop-1366x768");
  await dashboardReads(`${width} × ${height} on a 1366 × 768 screen`);
});
