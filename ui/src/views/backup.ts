// The Backup tab: the Backup owner button, the selected profile's job, the jobs an earlier
// run left (one job view serves both), what the api key allows — and the window's one live
// region, which announces a job's stage changes (not its progress or elapsed time).
import { computed } from "@preact/signals";
import { h } from "preact";
import { useLayoutEffect } from "preact/hooks";
import { cancelJob, closeResumed, saveJob, showBackup, startBackup } from "../actions/backup";
import { hasEnded, isRunning, stalledFor, type BackupView } from "../backup-state";
import type { Access } from "../bindings";
import { ErrorBody, errorTitle } from "../errors";
import { bytes, clock, percent, rate, secondsLeft, shortHash, timeOfDay } from "../format";
import { t, type Key } from "../i18n";
import { NextBackup } from "./plan";
import { currentJob, displayName, profileName, resumedJobs, selectedPermissions, selectedProfile, state, type Job } from "../state";

/** Time since `since`: the only part that changes each second while a job waits. */
function Elapsed({ since }: { since: number }) {
  return h("span", {}, clock((state.now.value - since) / 1000));
}

/** A download without bytes for a while says so (read each second, like the elapsed time). */
function Stalled({ view }: { view: BackupView }) {
  const quiet = stalledFor(view, state.now.value);
  if (quiet === null) return null;
  return h("p", { class: "warning", role: "note", "data-test": "stage-stalled" }, t("stageStalled", { seconds: String(Math.floor(quiet / 1000)) }));
}

function Downloading({ view, full }: { view: Extract<BackupView, { phase: "downloading" }>; full: boolean }) {
  const pct = percent(view.bytes, view.total);
  const left = secondsLeft(view.bytes, view.total, view.bytesPerSec);
  const text =
    pct === null
      ? t("stageDownloadingUnknown", { done: bytes(view.bytes), rate: rate(view.bytesPerSec) })
      : t("stageDownloading", { percent: `${pct}%`, rate: rate(view.bytesPerSec), left: left === null || !full ? "—" : clock(left) });
  return h(
    "div",
    {},
    full ? h("progress", { max: 100, value: pct ?? undefined, "aria-label": t("tabBackup") }) : null,
    h("p", { "data-test": full ? "stage-downloading" : null }, text),
    h(Stalled, { view }),
  );
}

/** Shows job's own saved file (its history entry has the job's id). */
function openSaved(job: Job, select: boolean): Promise<void> {
  return job.jobId ? showBackup(job.jobId, select) : Promise.resolve();
}

/** A job's stage, with what can be done now. `full`: the Backup panel's own job (waiting
 * explained, retry and open-folder offered); otherwise a line in the list of resumed jobs. */
function JobView({ job, full }: { job: Job; full: boolean }) {
  const v = job.view;
  switch (v.phase) {
    case "requested":
      return h("p", {}, t("stageRequested"));
    case "waiting": {
      const [before, after] = t("stageWaiting").split("{elapsed}");
      return h(
        "div",
        {},
        h("p", { "data-test": full ? "stage-waiting" : null }, before, h(Elapsed, { since: v.since }), after),
        v.silentSince !== null
          ? h("p", { class: "warning", role: "note", "data-test": full ? "service-silent" : null }, t("serviceSilent", { time: timeOfDay(v.silentSince) }))
          : full
            ? h("p", { class: "note" }, t("stageWaitingWhy"))
            : null,
      );
    }
    case "fetching":
      return h("p", {}, t("stageFetching"));
    case "downloading":
      return h(Downloading, { view: v, full });
    case "choose":
      return h(
        "div",
        {},
        full ? h("p", {}, t("stageSave")) : null,
        h(
          "div",
          { class: "row" },
          h("button", { class: "primary", "data-test": full ? "choose-where" : "resumed-save", "data-focus-next": full || undefined, onClick: () => void saveJob(job.key) }, t("chooseWhere")),
          full ? h("button", { class: "secondary", onClick: () => void cancelJob(job.key) }, t("discard")) : null,
        ),
      );
    case "saving":
      return h("p", {}, t("loading"));
    case "copying":
      return h("p", { "data-test": full ? "stage-copying" : null }, t("stageCopying", { targets: v.targets.join(", ") }));
    case "saved":
      return h(
        "div",
        { class: "success", "data-test": full ? "backup-saved" : null },
        full ? h("h3", {}, t("savedTitle")) : null,
        h("p", {}, t("savedText", { size: bytes(v.bytes), hash: shortHash(v.sha256), path: v.path })),
        full
          ? h(
              "div",
              { class: "row" },
              h("button", { class: "secondary", onClick: () => void openSaved(job, false) }, t("openFolder")),
              h("button", { class: "secondary", onClick: () => void openSaved(job, true) }, t("showFile")),
            )
          : null,
      );
    case "retrying":
      return h(
        "div",
        { class: "warning", role: "note", "data-test": full ? "backup-retrying" : null },
        h(full ? "h3" : "strong", {}, errorTitle(v.error)),
        h(ErrorBody, { error: v.error }),
        h("p", {}, t("retryingAt", { time: timeOfDay(v.at) })),
      );
    case "failed":
      return h(
        "div",
        { class: "error", "data-test": full ? "backup-failed" : null },
        h(full ? "h3" : "strong", {}, errorTitle(v.error)),
        h(ErrorBody, { error: v.error, testId: full ? "backup-error" : undefined }),
        full ? h("button", { class: "secondary", onClick: () => void startBackup() }, t("retry")) : null,
      );
    case "cancelled":
      return h("p", {}, t("cancelled"));
    case "idle":
      return null;
  }
}

const accessText: Record<Access, Key> = { allowed: "allowed", denied: "denied", unknown: "unknown" };

function PermissionsView() {
  const p = selectedPermissions.value;
  if (!p) return null;
  const row = (label: Key, access: Access) =>
    h("li", { class: `access ${access}` }, h("span", { class: "mark", "aria-hidden": "true" }, access === "allowed" ? "✓" : access === "denied" ? "✗" : "?"), `${t(label)}: ${t(accessText[access])}`);
  return h(
    "section",
    { class: "permissions", "aria-labelledby": "perm-title", "data-test": "permissions" },
    h("h3", { id: "perm-title" }, t("permissions")),
    h("ul", {}, row("permEnvironment", p.environment), row("permBackup", p.backup_owner), row("permWebhook", p.webhook)),
    h("p", { class: "note" }, t(p.source === "openapi" ? "permFromOpenapi" : "permLearnt")),
  );
}

/** Backups an earlier run left, finished now. On the dashboard (the first screen) while any
 * is under way — its rows then show the results; on the Backup tab until closed, with where
 * each went or why not. */
export function ResumedList({ onDashboard = false }: { onDashboard?: boolean }) {
  const all = resumedJobs.value;
  const jobs = onDashboard ? all.filter((j) => !hasEnded(j.view)) : all;
  if (jobs.length === 0) return null;
  const ended = jobs.every((j) => hasEnded(j.view));
  return h(
    "section",
    { class: "card", "aria-labelledby": "resumed-title" },
    h("h2", { id: "resumed-title" }, t(ended ? "resumedDone" : "resumedTitle")),
    ended ? null : h("p", { class: "note" }, t("resumedIntro")),
    jobs.map((job) => h("div", { key: job.key, class: "resumed", "data-test": "resumed-job" }, h("strong", {}, profileName(job.profileId)), h(JobView, { job, full: false }))),
    ended ? h("button", { type: "button", class: "secondary", "data-test": "resumed-close", onClick: closeResumed }, t("close")) : null,
  );
}

/** A real profile on "This computer only" would wait in vain: said before anyone clicks. */
function LoopbackWarning() {
  const profile = selectedProfile.value;
  if (!profile || profile.demo || state.settings.value.callback.kind !== "loopback") return null;
  return h(
    "div",
    { class: "warning", role: "note", "data-test": "loopback-warning" },
    h("p", {}, t("loopbackWarning")),
    h("button", { type: "button", class: "secondary", onClick: () => (state.tab.value = "settings") }, t("openSettings")),
  );
}

export function BackupPanel() {
  const job = currentJob.value;
  const running = job !== undefined && isRunning(job.view);
  const denied = selectedPermissions.value?.backup_owner === "denied";
  const klant = selectedProfile.value && displayName(selectedProfile.value);
  const phase = job?.view.phase;
  // When the control that had the focus goes away or is disabled (Backup owner once it runs,
  // Cancel when the job ends, the save dialog closing), the focus moves to the next step
  // instead of falling to the page.
  useLayoutEffect(() => {
    const active = document.activeElement as HTMLButtonElement | null;
    if (active && active !== document.body && !active.disabled) return;
    document.querySelector<HTMLElement>("[data-focus-next]")?.focus();
  }, [phase]);
  return h(
    "div",
    {},
    h(ResumedList, { onDashboard: false }),
    h(
      "section",
      { class: "card backup", "aria-labelledby": "backup-title" },
      h("h2", { id: "backup-title", "data-test": "backup-title" }, t("backupOwner"), klant ? ` — ${klant}` : ""),
      h("p", { class: "note" }, t("backupIntro")),
      denied ? h("p", { class: "warning", id: "not-allowed", role: "note" }, t("notAllowed")) : null,
      h(LoopbackWarning, {}),
      h(
        "div",
        { class: "row" },
        h(
          "button",
          {
            class: "primary big",
            "data-test": "backup-owner",
            "data-focus-next": !running || undefined,
            disabled: running || !state.selected.value,
            "aria-describedby": denied ? "not-allowed" : undefined,
            onClick: () => void startBackup(),
          },
          t("backupOwner"),
        ),
        job && running && job.view.phase !== "choose"
          ? h("button", { class: "secondary", "data-test": "cancel-backup", "data-focus-next": true, onClick: () => void cancelJob(job.key) }, t("cancelBackup"))
          : null,
      ),
      h("div", { class: "stage" }, job ? h(JobView, { job, full: true }) : null),
      selectedProfile.value ? h(NextBackup, { profile: selectedProfile.value }) : null,
      h(PermissionsView, {}),
    ),
  );
}

const announced: Record<BackupView["phase"], Key | null> = {
  idle: null,
  requested: "stageRequested",
  waiting: "announceWaiting",
  fetching: "stageFetching",
  downloading: "announceDownloading",
  choose: "stageSave",
  saving: "stageSave",
  copying: "announceCopying",
  saved: "savedTitle",
  retrying: "retryingTag",
  failed: "failedTitle",
  cancelled: "cancelled",
};

/** What the live region says: the newest backup started here, by klant and stage. It
 * changes only when the stage does, so a screen reader hears each stage once. */
const announcement = computed(() => {
  const started = state.jobs.value.filter((j) => !j.resumed);
  const job = started[started.length - 1];
  const key = job ? announced[job.view.phase] : null;
  return job && key ? `${profileName(job.profileId)}: ${t(key)}` : "";
});

export function Announcer() {
  return h("p", { class: "visually-hidden", role: "status", "aria-live": "polite", "data-test": "announce" }, announcement.value);
}
