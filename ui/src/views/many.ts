// "Change the picked klanten" (the dashboard): each part — plan, rule, copies, encryption,
// a tag — changed only when ticked; Preview shows each klant now and after (and what a new
// rule would remove now); Apply sets it for all of them.
import { h } from "preact";
import { applyMany, clearPicked, editMany, manyChangeOf, openMany, pickedIds, previewMany } from "../actions/many";
import type { Day, ProfileView, Schedule } from "../bindings";
import { t, type Key } from "../i18n";
import { displayName, state, type KeepPart, type ManyDraft } from "../state";
import { Check, Field } from "./fields";
import { days, describeRule, describeSchedule, kinds } from "./plan";
import { ruleOf, scheduleOf } from "../actions/plan";

const keepParts: KeepPart[] = ["keep_last", "keep_daily", "keep_weekly", "keep_monthly"];
const value = (e: Event) => (e.target as HTMLInputElement).value;

/** The bar over the table while klanten are picked: how many, Change…, Clear. */
export function PickedBar() {
  const n = state.picked.value.size;
  if (n === 0) return null;
  return h(
    "div",
    { class: "row picked-bar", role: "status", "data-test": "picked-bar" },
    h("strong", {}, t("manyPicked", { count: String(n) })),
    state.many.value === null ? h("button", { class: "primary", "data-test": "many-open", onClick: openMany }, t("manyOpen", { count: String(n) })) : null,
    h("button", { class: "link", "data-test": "many-clear", onClick: clearPicked }, t("manyClear")),
  );
}

function PlanPart({ d }: { d: ManyDraft }) {
  const p = d.plan;
  const set = (change: Partial<ManyDraft["plan"]>) => editMany({ plan: { ...p, ...change } });
  return h(
    "fieldset",
    { class: "many-part" },
    h("legend", {}, h(Check, { test: "many-plan-on", label: t("manyPlan"), checked: d.planOn, onToggle: (planOn) => editMany({ planOn }) })),
    d.planOn
      ? h(
          "div",
          { class: "row" },
          h(Field, { id: "many-plan-kind", label: t("planKind") }, h("select", { id: "many-plan-kind", "data-test": "many-plan-kind", value: p.kind, onChange: (e: Event) => set({ kind: value(e) as Schedule["kind"] }) }, kinds.map(([k, key]) => h("option", { key: k, value: k }, t(key))))),
          p.kind === "weekly" ? h(Field, { id: "many-plan-day", label: t("planDay") }, h("select", { id: "many-plan-day", value: p.day, onChange: (e: Event) => set({ day: value(e) as Day }) }, days.map((day) => h("option", { key: day, value: day }, t(day))))) : null,
          ["daily", "weekdays", "weekly"].includes(p.kind) ? h(Field, { id: "many-plan-at", label: t("planAt") }, h("input", { id: "many-plan-at", "data-test": "many-plan-at", type: "time", value: p.at, onInput: (e: Event) => set({ at: value(e) }) })) : null,
          p.kind === "every" ? h(Field, { id: "many-plan-hours", label: t("planHours") }, h("input", { id: "many-plan-hours", type: "number", min: 1, max: 168, value: p.hours, onInput: (e: Event) => set({ hours: value(e) }) })) : null,
        )
      : null,
  );
}

function KeepPartView({ d }: { d: ManyDraft }) {
  return h(
    "fieldset",
    { class: "many-part" },
    h("legend", {}, h(Check, { test: "many-keep-on", label: t("manyKeep"), checked: d.keepOn, onToggle: (keepOn) => editMany({ keepOn }) })),
    d.keepOn
      ? h(
          "div",
          { class: "row" },
          keepParts.map((part) =>
            h(Field, { key: part, id: `many-${part}`, label: t(part) }, h("input", { id: `many-${part}`, "data-test": `many-${part}`, type: "number", min: 0, value: d.keep[part], onInput: (e: Event) => editMany({ keep: { ...d.keep, [part]: value(e) } }) })),
          ),
        )
      : null,
  );
}

function CopiesPart({ d }: { d: ManyDraft }) {
  const targets = state.settings.value.copy_targets;
  if (targets.length === 0) return null;
  const every = d.copyTo === null;
  return h(
    "fieldset",
    { class: "many-part" },
    h("legend", {}, h(Check, { test: "many-copy-on", label: t("manyCopies"), checked: d.copyOn, onToggle: (copyOn) => editMany({ copyOn }) })),
    d.copyOn
      ? h(
          "div",
          { class: "row" },
          h(Check, { test: "many-copy-every", label: t("manyCopiesEvery"), checked: every, onToggle: (on) => editMany({ copyTo: on ? null : [] }) }),
          every
            ? null
            : targets.map((target) =>
                h(Check, {
                  key: target.id,
                  test: `many-copy-${target.id}`,
                  label: target.name,
                  checked: d.copyTo?.includes(target.id) ?? false,
                  onToggle: (on) => editMany({ copyTo: on ? [...(d.copyTo ?? []), target.id] : (d.copyTo ?? []).filter((id) => id !== target.id) }),
                }),
              ),
        )
      : null,
  );
}

function FolderPart({ d }: { d: ManyDraft }) {
  return h(
    "fieldset",
    { class: "many-part" },
    h("legend", {}, h(Check, { test: "many-folder-on", label: t("manyFolder"), checked: d.folderOn, onToggle: (folderOn) => editMany({ folderOn }) })),
    d.folderOn
      ? h(
          "div",
          { class: "row", role: "radiogroup" },
          (["choose", "office"] as const).map((kind) =>
            h(
              "label",
              { key: kind, class: "check" },
              h("input", { type: "radio", name: "many-folder", "data-test": `many-folder-${kind}`, checked: d.folder === kind, onChange: () => editMany({ folder: kind }) }),
              " ",
              t(kind === "choose" ? "manyFolderChoose" : "manyFolderOffice"),
            ),
          ),
        )
      : null,
  );
}

function EncryptionPart({ d }: { d: ManyDraft }) {
  const encKinds: [ManyDraft["encryption"], Key][] = [
    ["none", "encryptNone"],
    ["passphrase", "encryptPassphrase"],
    ["recipient", "encryptRecipient"],
  ];
  return h(
    "fieldset",
    { class: "many-part" },
    h("legend", {}, h(Check, { test: "many-encrypt-on", label: t("manyEncrypt"), checked: d.encryptOn, onToggle: (encryptOn) => editMany({ encryptOn }) })),
    d.encryptOn
      ? h(
          "div",
          { class: "row" },
          h(Field, { id: "many-encrypt-kind", label: t("encryptKind") }, h("select", { id: "many-encrypt-kind", value: d.encryption, onChange: (e: Event) => editMany({ encryption: value(e) as ManyDraft["encryption"] }) }, encKinds.map(([k, key]) => h("option", { key: k, value: k }, t(key))))),
          d.encryption === "passphrase"
            ? h(Field, { id: "many-passphrase", label: t("encryptPassphraseLabel"), hint: t("encryptPassphraseHint") }, h("input", { id: "many-passphrase", type: "password", autoComplete: "new-password", value: d.passphrase, onInput: (e: Event) => editMany({ passphrase: value(e) }) }))
            : null,
          d.encryption === "recipient"
            ? h(Field, { id: "many-recipient", label: t("encryptRecipientLabel") }, h("input", { id: "many-recipient", autoComplete: "off", spellcheck: false, placeholder: "age1…", value: d.recipient, onInput: (e: Event) => editMany({ recipient: value(e) }) }))
            : null,
        )
      : null,
  );
}

function TagsPart({ d, picked }: { d: ManyDraft; picked: ProfileView[] }) {
  const tags = [...new Set(picked.flatMap((p) => p.tags))].sort((a, b) => a.localeCompare(b));
  return h(
    "fieldset",
    { class: "many-part" },
    h("legend", {}, t("manyTags")),
    h(
      "div",
      { class: "row" },
      h(Field, { id: "many-add-tag", label: t("manyAddTag") }, h("input", { id: "many-add-tag", "data-test": "many-add-tag", autoComplete: "off", value: d.addTag, onInput: (e: Event) => editMany({ addTag: value(e) }) })),
      tags.length > 0
        ? h(
            Field,
            { id: "many-remove-tag", label: t("manyRemoveTag") },
            h("select", { id: "many-remove-tag", "data-test": "many-remove-tag", value: d.removeTag, onChange: (e: Event) => editMany({ removeTag: value(e) }) }, h("option", { value: "" }, "—"), tags.map((tag) => h("option", { key: tag, value: tag }, tag))),
          )
        : null,
    ),
  );
}

/** A klant's settings in words, as the preview compares them. */
function settingsOf(p: ProfileView): Record<string, string> {
  const enc = p.encryption === null ? t("encryptNone") : p.encryption.kind === "passphrase" ? t("encryptPassphrase") : `${t("encryptRecipient")}: ${p.encryption.recipient}`;
  const copies = p.copy_to === null ? t("manyCopiesEvery") : p.copy_to.map((id) => state.settings.value.copy_targets.find((c) => c.id === id)?.name ?? id).join(", ") || "—";
  return {
    folder: p.save_folder ?? t("manyFolderOfficeShort"),
    plan: p.plan ? describeSchedule(p.plan.schedule) : t("planManual"),
    keep: describeRule(p.retention),
    copies,
    encryption: enc,
    tags: p.tags.join(", ") || "—",
  };
}

/** `p` as the draft would leave it. */
function afterChange(p: ProfileView, d: ManyDraft): ProfileView {
  const change = manyChangeOf(d);
  const removed = (tag: string) => change.remove_tags.some((r) => r.toLowerCase() === tag.toLowerCase());
  const tags = [...p.tags, ...change.add_tags.filter((a) => !p.tags.some((x) => x.toLowerCase() === a.toLowerCase()))].filter((x) => !removed(x));
  const rule = ruleOf(d.keep);
  return {
    ...p,
    plan: d.planOn ? { schedule: scheduleOf(d.plan), paused: d.plan.paused } as ProfileView["plan"] : p.plan,
    retention: d.keepOn ? (Object.keys(rule).length ? rule : null) : p.retention,
    copy_to: d.copyOn ? d.copyTo : p.copy_to,
    save_folder: d.folderOn ? (d.folder === "office" ? null : t("manyFolderAtApply")) : p.save_folder,
    encryption: d.encryptOn ? (d.encryption === "none" ? null : d.encryption === "passphrase" ? { kind: "passphrase" } : { kind: "recipient", recipient: d.recipient }) : p.encryption,
    tags,
  };
}

const partWords: [string, Key][] = [
  ["plan", "field_plan"],
  ["keep", "field_retention"],
  ["copies", "manyCopiesShort"],
  ["folder", "manyFolderShort"],
  ["encryption", "manyEncryptShort"],
  ["tags", "field_tags"],
];

/** Each picked klant now and after; unchanged parts are not listed. */
function Preview({ d, picked }: { d: ManyDraft; picked: ProfileView[] }) {
  const rust = new Map((d.preview ?? []).map((p) => [p.profile_id, p.would_remove]));
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { class: "many-preview", "data-test": "many-preview" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("dashKlant")), h("th", { scope: "col" }, t("manyChanges")))),
      h(
        "tbody",
        {},
        picked.map((p) => {
          const [now, after] = [settingsOf(p), settingsOf(afterChange(p, d))];
          const changes = partWords.filter(([part]) => now[part] !== after[part]);
          const removes = rust.get(p.id) ?? 0;
          return h(
            "tr",
            { key: p.id, "data-test": "many-preview-row" },
            h("th", { scope: "row" }, displayName(p)),
            h(
              "td",
              {},
              changes.length === 0 ? h("span", { class: "note" }, t("manyNoChange")) : changes.map(([part, key]) => h("div", { key: part }, h("strong", {}, `${t(key)}: `), `${now[part]} → ${after[part]}`)),
              removes > 0 ? h("div", { class: "status failed", "data-test": "many-removes" }, t("manyRemoves", { count: String(removes) })) : null,
            ),
          );
        }),
      ),
    ),
  );
}

/** The panel: the parts, Preview, then Apply. */
export function ManyPanel() {
  const d = state.many.value;
  if (!d) return null;
  const ids = pickedIds();
  const byId = new Map(state.profiles.value.map((p) => [p.id, p]));
  const picked = ids.map((id) => byId.get(id)).filter((p): p is ProfileView => p !== undefined);
  const result = d.result;
  return h(
    "section",
    { class: "many", "aria-labelledby": "many-title", "data-test": "many" },
    h("h3", { id: "many-title" }, t("manyTitle", { count: String(picked.length) })),
    h("p", { class: "note" }, t("manyNote")),
    h(PlanPart, { d }),
    h(KeepPartView, { d }),
    h(CopiesPart, { d }),
    h(FolderPart, { d }),
    h(EncryptionPart, { d }),
    h(TagsPart, { d, picked }),
    d.preview ? h(Preview, { d, picked }) : null,
    result !== null && typeof result === "object" && "error" in result ? h("div", { class: "error", role: "alert", "data-test": "many-error" }, result.error.message) : null,
    result !== null && typeof result === "object" && "done" in result
      ? h("p", { class: result.done > 0 ? "success" : "note", role: "status", "data-test": "many-done" }, result.done > 0 ? t("manyDone", { count: String(result.done) }) : t("manyNoFolder"))
      : null,
    h(
      "div",
      { class: "row" },
      h("button", { class: "secondary", "data-test": "many-preview-button", disabled: picked.length === 0, onClick: () => void previewMany() }, t("manyPreview")),
      h("button", { class: "primary", "data-test": "many-apply", disabled: d.preview === null || result === "applying", onClick: () => void applyMany() }, t("manyApply", { count: String(picked.length) })),
      h("button", { class: "secondary", "data-test": "many-close", onClick: () => (state.many.value = null) }, t("cancel")),
    ),
  );
}
