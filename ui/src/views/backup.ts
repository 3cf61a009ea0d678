// The Backup owner panel: one prominent button, live stages, cancel, save, saved.
import * as actions from "../actions";
import { isRunning } from "../backup-state";
import type { Access } from "../bindings";
import { h } from "../dom";
import { bytes, clock, percent, rate, secondsLeft, shortHash } from "../format";
import { t, type Key } from "../i18n";
import { state, type Resumed } from "../state";

function stageText(): HTMLElement | null {
  const v = state.backup;
  switch (v.phase) {
    case "requested":
      return h("p", {}, t("stageRequested"));
    case "waiting":
      return h(
        "div",
        {},
        h("p", { "data-test": "stage-waiting" }, t("stageWaiting", { elapsed: clock((Date.now() - v.since) / 1000) })),
        h("p", { class: "note" }, t("stageWaitingWhy")),
      );
    case "fetching":
      return h("p", {}, t("stageFetching"));
    case "downloading": {
      const pct = percent(v.bytes, v.total);
      const left = secondsLeft(v.bytes, v.total, v.bytesPerSec);
      const bar = h("progress", { max: 100, "aria-label": t("tabBackup") });
      if (pct !== null) bar.value = pct;
      return h(
        "div",
        {},
        bar,
        h(
          "p",
          { "data-test": "stage-downloading" },
          pct === null
            ? t("stageDownloadingUnknown", { done: bytes(v.bytes), rate: rate(v.bytesPerSec) })
            : t("stageDownloading", { percent: `${pct}%`, rate: rate(v.bytesPerSec), left: left === null ? "—" : clock(left) }),
        ),
      );
    }
    case "choose":
      return h(
        "div",
        {},
        h("p", {}, t("stageSave")),
        h(
          "div",
          { class: "row" },
          h("button", { class: "primary", "data-test": "choose-where", onclick: () => void actions.chooseWhereToSave() }, t("chooseWhere")),
          h("button", { class: "secondary", onclick: () => void actions.cancelBackup() }, t("discard")),
        ),
      );
    case "saving":
      return h("p", {}, t("loading"));
    case "saved":
      return h(
        "div",
        { class: "success", role: "status", "data-test": "backup-saved" },
        h("h3", {}, t("savedTitle")),
        h("p", {}, t("savedText", { size: bytes(v.bytes), hash: shortHash(v.sha256), path: v.path })),
        h(
          "div",
          { class: "row" },
          h("button", { class: "secondary", onclick: () => void openLatest(false) }, t("openFolder")),
          h("button", { class: "secondary", onclick: () => void openLatest(true) }, t("showFile")),
        ),
      );
    case "failed":
      return h(
        "div",
        { class: "error", role: "alert", "data-test": "backup-failed" },
        h("h3", {}, t("failedTitle")),
        h("p", { "data-test": "backup-error" }, v.error.message),
        h("button", { class: "secondary", onclick: () => void actions.startBackup() }, t("retry")),
      );
    case "cancelled":
      return h("p", { role: "status" }, t("cancelled"));
    case "idle":
      return null;
  }
}

function openLatest(select: boolean): Promise<void> {
  const latest = state.history.find((e) => e.stage === "saved");
  return latest ? actions.showBackup(latest.id, select) : Promise.resolve();
}

const accessText: Record<Access, Key> = { allowed: "allowed", denied: "denied", unknown: "unknown" };

function permissionsView(): HTMLElement | null {
  const p = state.permissions;
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

/** One line for a resumed job's state, and its Save button when it is staged. */
function resumedJob(job: Resumed): HTMLElement {
  const v = job.view;
  const profile = state.profiles.find((p) => p.id === job.profileId)?.name ?? job.profileId;
  let body: HTMLElement;
  switch (v.phase) {
    case "downloading": {
      const pct = percent(v.bytes, v.total);
      body = h("p", {}, pct === null ? t("stageDownloadingUnknown", { done: bytes(v.bytes), rate: rate(v.bytesPerSec) }) : t("stageDownloading", { percent: `${pct}%`, rate: rate(v.bytesPerSec), left: "—" }));
      break;
    }
    case "choose":
      body = h("button", { class: "primary", "data-test": "resumed-save", onclick: () => void actions.saveResumed(job.jobId) }, t("chooseWhere"));
      break;
    case "saved":
      body = h("p", { class: "success", role: "status" }, t("savedText", { size: bytes(v.bytes), hash: shortHash(v.sha256), path: v.path }));
      break;
    case "failed":
      body = h("p", { class: "error", role: "alert" }, v.error.message);
      break;
    case "waiting":
      body = h("p", {}, t("stageWaiting", { elapsed: clock((Date.now() - v.since) / 1000) }));
      break;
    case "fetching":
      body = h("p", {}, t("stageFetching"));
      break;
    default:
      body = h("p", {}, t("loading"));
  }
  return h("div", { class: "resumed", "data-test": "resumed-job" }, h("strong", {}, profile), body);
}

function resumedView(): HTMLElement | null {
  if (state.resumed.length === 0) return null;
  return h(
    "section",
    { class: "card", "aria-labelledby": "resumed-title", "aria-live": "polite" },
    h("h2", { id: "resumed-title" }, t("resumedTitle")),
    h("p", { class: "note" }, t("resumedIntro")),
    ...state.resumed.map(resumedJob),
  );
}

export function backupView(): HTMLElement {
  const running = isRunning(state.backup);
  const denied = state.permissions?.backup_owner === "denied";
  const button = h(
    "button",
    { class: "primary big", "data-test": "backup-owner", disabled: running || !state.selected, "aria-describedby": denied ? "not-allowed" : null, onclick: () => void actions.startBackup() },
    t("backupOwner"),
  );
  const panel = h(
    "section",
    { class: "card backup", "aria-labelledby": "backup-title" },
    h("h2", { id: "backup-title" }, t("backupOwner")),
    h("p", { class: "note" }, t("backupIntro")),
    denied ? h("p", { class: "warning", id: "not-allowed", role: "note" }, t("notAllowed")) : null,
    h("div", { class: "row" }, button, running && state.backup.phase !== "choose" ? h("button", { class: "secondary", "data-test": "cancel-backup", onclick: () => void actions.cancelBackup() }, t("cancelBackup")) : null),
    h("div", { class: "stage", "aria-live": "polite" }, stageText()),
    permissionsView(),
  );
  return h("div", {}, resumedView(), panel);
}
