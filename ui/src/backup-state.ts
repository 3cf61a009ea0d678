// The backup panel's state machine: AppJobEvents from Rust in, what to show out. Pure, so
// that Vitest covers it without a window.
import type { UiError } from "./api";
import type { AppJobEvent } from "./bindings";

export type BackupView =
  | { phase: "idle" }
  | { phase: "requested" }
  /** `silentSince`: when the service stopped answering (its liveness checks), or null. */
  | { phase: "waiting"; since: number; silentSince: number | null }
  | { phase: "fetching" }
  /** `changedAt`: when the last bytes came (a stall shows after {@link STALL_AFTER_MS}). */
  | { phase: "downloading"; bytes: number; total: number | null; bytesPerSec: number; changedAt: number }
  | { phase: "choose"; fileName: string; bytes: number; sha256: string }
  | { phase: "saving" }
  /** Saved here; now copied to these copy targets before the job ends. */
  | { phase: "copying"; targets: string[] }
  | { phase: "saved"; path: string; bytes: number; sha256: string }
  /** A backup nobody watches failed for a passing reason; Kluis tries again `at` (ms). */
  | { phase: "retrying"; error: UiError; at: number }
  | { phase: "failed"; error: UiError }
  | { phase: "cancelled" };

/** No bytes for this long, and the download says it stalled (the core keeps retrying). */
export const STALL_AFTER_MS = 10_000;

/** Whether the download has had no bytes for {@link STALL_AFTER_MS}: how long, else null. */
export function stalledFor(view: BackupView, now: number): number | null {
  if (view.phase !== "downloading") return null;
  const quiet = now - view.changedAt;
  return quiet >= STALL_AFTER_MS ? quiet : null;
}

/** Whether a job has ended: saved, failed or cancelled. */
export function hasEnded(view: BackupView): boolean {
  return ["saved", "failed", "cancelled"].includes(view.phase);
}

/** Whether a job is under way (Cancel is offered). */
export function isRunning(view: BackupView): boolean {
  return ["requested", "waiting", "fetching", "downloading", "choose", "saving", "retrying"].includes(view.phase);
}

export function reduce(view: BackupView, event: AppJobEvent, now: number): BackupView {
  if (view.phase === "cancelled") return view; // late events of a cancelled job
  switch (event.kind) {
    case "stage":
      switch (event.stage) {
        case "requested":
          return { phase: "requested" };
        case "accepted":
          return { phase: "waiting", since: now, silentSince: null };
        case "callback_received":
        case "result_fetched":
          return { phase: "fetching" };
        case "downloading":
          return { phase: "downloading", bytes: 0, total: null, bytesPerSec: 0, changedAt: now };
        default:
          return view; // saved/failed arrive as their own events with details
      }
    case "progress": {
      const grew = view.phase !== "downloading" || event.bytes !== view.bytes;
      const changedAt = grew || view.phase !== "downloading" ? now : view.changedAt;
      return { phase: "downloading", bytes: event.bytes, total: event.total, bytesPerSec: event.bytes_per_sec, changedAt };
    }
    case "service":
      if (view.phase !== "waiting") return view;
      return { ...view, silentSince: event.answering ? null : (view.silentSince ?? now) };
    case "staged":
      return { phase: "choose", fileName: event.file_name, bytes: event.bytes, sha256: event.sha256 };
    case "copying":
      return { phase: "copying", targets: event.targets };
    case "saved":
      return { phase: "saved", path: event.path, bytes: event.bytes, sha256: event.sha256 };
    case "retrying":
      return { phase: "retrying", error: { code: event.code, message: event.message }, at: now + event.in_secs * 1000 };
    case "failed":
      return event.code === "cancelled" ? { phase: "cancelled" } : { phase: "failed", error: { code: event.code, message: event.message } };
  }
}
