import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { coalesced, gathered, GATHER_MS } from "./coalesce";
import { runningProfiles, state } from "./state";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** A run that ends when `end()` is called; `runs` counts the starts. */
function controlledRun() {
  const ends: (() => void)[] = [];
  const run = { starts: 0, end: () => ends.shift()?.(), fn: () => new Promise<void>((resolve) => (run.starts++, ends.push(resolve))) };
  return run;
}

describe("coalesced", () => {
  it("serves every call made while it runs with one more run after it", async () => {
    const run = controlledRun();
    const refresh = coalesced(run.fn, 0);
    const first = refresh();
    const later = [refresh(), refresh(), refresh()];
    expect(run.starts, "one at a time").toBe(1);
    run.end();
    await first;
    await vi.advanceTimersByTimeAsync(0);
    expect(run.starts, "the calls made meanwhile share one run").toBe(2);
    run.end();
    await Promise.all(later);
  });

  it("runs at most once per spacing, the later calls at its end", async () => {
    const run = controlledRun();
    const refresh = coalesced(run.fn, 1000);
    const first = refresh();
    run.end();
    await first;
    const second = refresh();
    await vi.advanceTimersByTimeAsync(999);
    expect(run.starts, "not within the spacing").toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(run.starts, "once the spacing has passed").toBe(2);
    run.end();
    await second;
  });

  it("goes on after a run that failed", async () => {
    let fail = true;
    let starts = 0;
    const refresh = coalesced(async () => {
      starts++;
      if (fail) throw new Error("the backend was busy");
    }, 0);
    const first = refresh();
    const second = refresh();
    await expect(first).rejects.toThrow("busy");
    fail = false;
    await vi.advanceTimersByTimeAsync(0);
    await second;
    expect(starts).toBe(2);
  });
});

describe("gathered", () => {
  it("applies a burst together, once", async () => {
    const batches: number[] = [];
    let applied = 0;
    const later = gathered((all) => {
      const before = applied;
      all();
      batches.push(applied - before);
    });
    for (let i = 0; i < 50; i++) later(() => applied++);
    expect(applied, "not at once").toBe(0);
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    expect(batches).toEqual([50]);
    later(() => applied++);
    await vi.advanceTimersByTimeAsync(GATHER_MS);
    expect(batches, "a later one in a batch of its own").toEqual([50, 1]);
  });
});

describe("runningProfiles", () => {
  it("stays the same set while the same klanten run, whatever their stages", () => {
    state.jobs.value = [{ key: "a", jobId: "a", profileId: "bakker", resumed: false, view: { phase: "requested" } }];
    const before = runningProfiles.value;
    state.jobs.value = [{ key: "a", jobId: "a", profileId: "bakker", resumed: false, view: { phase: "waiting", since: 1, silentSince: null } }];
    expect(runningProfiles.value, "a stage of a klant already running").toBe(before);
    state.jobs.value = [];
    expect(runningProfiles.value.size).toBe(0);
  });
});
