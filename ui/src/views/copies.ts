// Settings → copies off this computer: the copy targets, each with Test and Remove, and a
// new one added from a folder Rust's dialog picks (the page never names a path).
import { h } from "preact";
import { addCopyFolder, removeCopyTarget, saveTargetRule, testCopyTarget, toggleTargetRule } from "../actions/settings";
import { t } from "../i18n";
import { newBucketDraft, newSftpDraft, state, type KeepPart } from "../state";
import { BucketForm } from "./bucket";
import { SftpForm } from "./sftp";
import { Field } from "./fields";
import { describeRule } from "./plan";
import type { Place } from "../bindings";

/** Where a target's copies go, in a line: a folder's path, a bucket with its lock, or an SFTP
 * server's folder with its pinned host key. */
export function placeText(place: Place): string {
  if (place.kind === "folder") return place.path;
  if (place.kind === "sftp") {
    const port = place.port === 22 ? "" : `:${place.port}`;
    return `sftp://${place.user}@${place.host}${port}${place.path.startsWith("/") ? "" : "/"}${place.path} (${place.host_key})`;
  }
  const prefix = place.prefix ? `/${place.prefix}` : "";
  const lock = place.lock ? `, ${t("copyLocked", { days: String(place.lock.days), mode: t(place.lock.mode === "compliance" ? "lockCompliance" : "lockGovernance") })}` : "";
  return `s3://${place.bucket}${prefix} (${place.endpoint})${lock}`;
}

const keepParts: KeepPart[] = ["keep_last", "keep_daily", "keep_weekly", "keep_monthly"];

/** A target's own rule: the same four counts as a klant's, for the copies it holds. */
function TargetRule() {
  const draft = state.targetRule.value;
  if (!draft) return null;
  return h(
    "form",
    { class: "keep", "data-test": "copy-rule-form", onSubmit: (e: Event) => (e.preventDefault(), void saveTargetRule()) },
    h("p", { class: "note" }, t("copyRuleNote")),
    keepParts.map((part) =>
      h(
        Field,
        { key: part, id: `copy-keep-${part}`, label: t(part) },
        h("input", { id: `copy-keep-${part}`, "data-test": `copy-keep-${part}`, type: "number", min: 0, max: 1000, step: 1, inputMode: "numeric", value: draft.keep[part], onInput: (e: Event) => (state.targetRule.value = { ...draft, keep: { ...draft.keep, [part]: (e.target as HTMLInputElement).value } }) }),
      ),
    ),
    h("div", { class: "row" }, h("button", { type: "submit", class: "secondary", "data-test": "copy-rule-save" }, t("keepSave"))),
  );
}

/** Settings' copy targets — or, `recovering` (*Restore from a copy…*), the same forms to add
 * the target where a lost computer's copies are, without Settings' words about this one. */
export function CopyTargets({ recovering = false }: { recovering?: boolean }) {
  const targets = state.settings.value.copy_targets;
  const test = state.copyTest.value;
  const name = state.copyTargetName.value;
  return h(
    "section",
    { "aria-labelledby": recovering ? undefined : "copies-title", "aria-label": recovering ? t("recoverAddTarget") : undefined },
    recovering ? null : h("h3", { id: "copies-title" }, t("copiesTitle")),
    h("p", { class: "note" }, t(recovering ? "recoverAddNote" : "copiesNote")),
    targets.length === 0
      ? recovering
        ? null
        : h("p", { "data-test": "copies-none" }, t("copiesNone"))
      : h(
          "ul",
          { class: "copy-targets", "data-test": "copy-targets" },
          targets.map((target) => {
            const result = test?.targetId === target.id ? test.result : null;
            return h(
              "li",
              { key: target.id, "data-test": "copy-target" },
              h("strong", {}, target.name),
              " ",
              h("span", { class: "note", "data-test": "copy-place" }, placeText(target.place)),
              h("p", { class: "note", "data-test": "copy-keep" }, describeRule(target.keep ?? null)),
              state.targetRule.value?.targetId === target.id ? h(TargetRule, {}) : null,
              h(
                "div",
                { class: "row" },
                h("button", { type: "button", class: "secondary", "data-test": "copy-rule", "aria-expanded": state.targetRule.value?.targetId === target.id, onClick: () => toggleTargetRule(target.id) }, t("copyRule")),
                h("button", { type: "button", class: "secondary", "data-test": "copy-test", disabled: result === "testing", onClick: () => void testCopyTarget(target.id) }, t("copyTest")),
                h("button", { type: "button", class: "secondary", "data-test": "copy-remove", onClick: () => void removeCopyTarget(target.id) }, t("copyRemove")),
              ),
              h("p", { role: "status", "data-test": "copy-test-result" }, result === "ok" ? t("copyTestOk") : result && typeof result === "object" ? `${t("copyTestFailed")}: ${result.error.message}` : ""),
            );
          }),
        ),
    h(
      "form",
      { class: "row", onSubmit: (e: Event) => (e.preventDefault(), void addCopyFolder()) },
      h(Field, { id: "copy-name", label: t("copyNameLabel") }, h("input", { id: "copy-name", "data-test": "copy-name", autoComplete: "off", value: name, onInput: (e: Event) => (state.copyTargetName.value = (e.target as HTMLInputElement).value) })),
      h("button", { type: "submit", class: "secondary", "data-test": "copy-add", disabled: name.trim() === "" }, t("copyAddFolder")),
      state.bucketDraft.value ? null : h("button", { type: "button", class: "secondary", "data-test": "copy-add-bucket", onClick: () => (state.bucketDraft.value = newBucketDraft()) }, t("copyAddBucket")),
      state.sftpDraft.value ? null : h("button", { type: "button", class: "secondary", "data-test": "copy-add-sftp", onClick: () => (state.sftpDraft.value = newSftpDraft()) }, t("copyAddSftp")),
    ),
    h(BucketForm, {}),
    h(SftpForm, {}),
  );
}
