import { describe, expect, it } from "vitest";
import { isRunning, reduce, stalledFor, STALL_AFTER_MS, type BackupView } from "./backup-state";
import type { AppJobEvent } from "./bindings";

const run = (events: AppJobEvent[]): BackupView => events.reduce<BackupView>((v, e) => reduce(v, e, 1000), { phase: "idle" });

describe("backup panel state", () => {
  it("follows the job's stages to a staged file", () => {
    const view = run([
      { kind: "stage", stage: "requested" },
      { kind: "stage", stage: "accepted" },
    ]);
    expect(view).toEqual({ phase: "waiting", since: 1000, silentSince: null });
    const later = run([
      { kind: "stage", stage: "requested" },
      { kind: "stage", stage: "downloading" },
      { kind: "progress", bytes: 10, total: 100, bytes_per_sec: 5 },
      { kind: "staged", file_name: "b.zip", bytes: 100, sha256: "ab" },
    ]);
    expect(later).toEqual({ phase: "choose", fileName: "b.zip", bytes: 100, sha256: "ab" });
    expect(isRunning(later)).toBe(true);
  });
  it("ends in saved or failed, which are not running", () => {
    const saved = run([{ kind: "saved", path: "/x.zip", bytes: 1, sha256: "c" }]);
    expect(saved.phase).toBe("saved");
    expect(isRunning(saved)).toBe(false);
    const failed = run([{ kind: "failed", code: "auth_failed", message: "m" }]);
    expect(failed).toEqual({ phase: "failed", error: { code: "auth_failed", message: "m" } });
  });
  it("shows the copying to the copy targets after the download, then saved", () => {
    const copying = run([
      { kind: "stage", stage: "downloading" },
      { kind: "copying", targets: ["NAS", "Cloud"] },
    ]);
    expect(copying).toEqual({ phase: "copying", targets: ["NAS", "Cloud"] });
    expect(isRunning(copying), "nothing to cancel: the backup is saved").toBe(false);
    expect(reduce(copying, { kind: "saved", path: "/x.zip", bytes: 1, sha256: "c" }, 2000).phase).toBe("saved");
  });
  it("waits to try again after a passing failure, still running, until the next try starts", () => {
    const waiting = run([
      { kind: "stage", stage: "requested" },
      { kind: "retrying", code: "network", message: "No connection.", in_secs: 120 },
    ]);
    expect(waiting).toEqual({ phase: "retrying", error: { code: "network", message: "No connection." }, at: 1000 + 120_000 });
    expect(isRunning(waiting), "Cancel is offered while it waits").toBe(true);
    expect(reduce(waiting, { kind: "stage", stage: "requested" }, 2000)).toEqual({ phase: "requested" });
  });
  it("ignores events that arrive after a cancel", () => {
    const cancelled = reduce({ phase: "cancelled" }, { kind: "progress", bytes: 5, total: 9, bytes_per_sec: 1 }, 0);
    expect(cancelled).toEqual({ phase: "cancelled" });
    expect(run([{ kind: "failed", code: "cancelled", message: "" }])).toEqual({ phase: "cancelled" });
  });

  it("marks the service silent while it does not answer, from the first time it did not", () => {
    let view = reduce({ phase: "idle" }, { kind: "stage", stage: "accepted" }, 0);
    view = reduce(view, { kind: "service", answering: false }, 60_000);
    view = reduce(view, { kind: "service", answering: false }, 120_000);
    expect(view).toEqual({ phase: "waiting", since: 0, silentSince: 60_000 });
    view = reduce(view, { kind: "service", answering: true }, 180_000);
    expect(view).toEqual({ phase: "waiting", since: 0, silentSince: null });
  });

  it("calls a download stalled only after a stretch without new bytes", () => {
    let view = reduce({ phase: "idle" }, { kind: "stage", stage: "downloading" }, 0);
    view = reduce(view, { kind: "progress", bytes: 10, total: 100, bytes_per_sec: 5 }, 1_000);
    expect(stalledFor(view, 1_000 + STALL_AFTER_MS - 1), "not yet").toBeNull();
    // A report with the same byte count (the download retrying) is no progress.
    view = reduce(view, { kind: "progress", bytes: 10, total: 100, bytes_per_sec: 0 }, 5_000);
    expect(stalledFor(view, 1_000 + STALL_AFTER_MS)).toBe(STALL_AFTER_MS);
    view = reduce(view, { kind: "progress", bytes: 20, total: 100, bytes_per_sec: 5 }, 12_000);
    expect(stalledFor(view, 13_000), "bytes came again").toBeNull();
  });
});
