// Settings → Office (this PC in an office of several PCs, around the office hub) and the
// dashboard's Office card: every klant of every PC, what needs attention first with why and
// whose desk it is at — one screen that says every klant is safe, or which one is not.
import { h } from "preact";
import { joinOffice, leaveOffice, showOfficeView } from "../actions/office";
import type { Flag, KlantRow, OfficeView } from "../bindings";
import { ago } from "../dashboard";
import { dateTime } from "../format";
import { locale, t } from "../i18n";
import { state, type OfficeDraft } from "../state";
import { Check, TextInput } from "./fields";

/** A field of the join form, bound to the draft. */
function Input({ id, field, label, type = "text", hint, required = true }: { id: string; field: Exclude<keyof OfficeDraft, "ownCa">; label: string; type?: string; hint?: string; required?: boolean }) {
  const draft = state.officeDraft.value;
  const onValue = (value: string) => (state.officeDraft.value = { ...draft, [field]: value });
  return h(TextInput, { id, label, hint, type, required, value: draft[field], onValue });
}

export function OfficeSettings() {
  const office = state.office.value;
  const made = state.officeMadeKey.value;
  return h(
    "section",
    { "aria-labelledby": "office-title", "data-test": "office-settings" },
    h("h3", { id: "office-title" }, t("officeTitle")),
    h("p", { class: "note" }, t("officeNote")),
    made
      ? h(
          "div",
          { class: "card made-key", role: "alert", "data-test": "office-made-key" },
          h("p", {}, t("officeMadeKey")),
          h("code", { class: "key" }, made),
          h("button", { class: "secondary", "data-test": "office-made-key-done", onClick: () => (state.officeMadeKey.value = null) }, t("officeMadeKeyDone")),
        )
      : null,
    office
      ? h(
          "div",
          { "data-test": "office-joined" },
          h("p", {}, t("officeJoined", { pc: office.pc, hub: office.hub, when: dateTime(office.joined_ms, locale()) })),
          h("button", { class: "secondary", "data-test": "office-leave", onClick: () => void leaveOffice() }, t("officeLeave")),
        )
      : h(
          "form",
          { class: "office", "data-test": "office-form", onSubmit: (e: Event) => (e.preventDefault(), void joinOffice()) },
          h(Input, { id: "office-hub", field: "hub", label: t("officeHub"), hint: t("officeHubHint") }),
          h(Input, { id: "office-pc", field: "pc", label: t("officePc"), hint: t("officePcHint") }),
          h(Input, { id: "office-pc-key", field: "pcKey", label: t("officePcKey"), type: "password" }),
          h(Input, { id: "office-key", field: "officeKey", label: t("officeKey"), type: "password", hint: t("officeKeyHint"), required: false }),
          h(Check, { test: "office-own-ca", label: t("officeOwnCa"), checked: state.officeDraft.value.ownCa, onToggle: (on) => (state.officeDraft.value = { ...state.officeDraft.value, ownCa: on }) }),
          h("button", { type: "submit", "data-test": "office-join" }, t("officeJoin")),
        ),
  );
}

/** A flag in words. */
function flagText(flag: Flag): string {
  switch (flag.flag) {
    case "planned_twice":
      return t("officeFlagTwice", { pcs: flag.pcs.join(", ") });
    case "overdue":
      return t("officeFlagOverdue");
    case "failed":
      return t("officeFlagFailed", { pc: flag.pc, error: flag.error });
    case "on_silent_pc":
      return t("officeFlagSilent", { pc: flag.pc });
    case "not_planned":
      return t("officeFlagNotPlanned");
  }
}

function KlantLine({ k, now }: { k: KlantRow; now: number }) {
  const last = k.last_backup ? t("officeLast", { when: ago(k.last_backup[0], now), pc: k.last_backup[1] }) : t("dashNever");
  return h(
    "li",
    { "data-test": "office-klant", class: k.flags.length ? "attention" : "" },
    h("strong", {}, k.names.join(" / ")),
    " — ",
    last,
    " — ",
    t("officeOn", { pcs: k.on.map((o) => o.pc).join(", ") }),
    k.flags.length ? h("ul", {}, k.flags.map((f, i) => h("li", { key: i, "data-test": "office-flag" }, flagText(f)))) : null,
  );
}

function Shown({ view }: { view: OfficeView }) {
  const now = Date.now();
  const attention = view.klanten.filter((k) => k.flags.length > 0);
  const safe = attention.length === 0 && view.pcs.every((p) => !p.silent && p.unreadable === null);
  return h(
    "div",
    {},
    h("p", { role: "status", "data-test": "office-summary", class: safe ? "ok" : "bad" }, safe ? t("officeAllSafe", { count: String(view.klanten.length) }) : t("officeAttention", { count: String(attention.length), all: String(view.klanten.length) })),
    h(
      "ul",
      { class: "office-pcs" },
      view.pcs.map((p) =>
        h(
          "li",
          { key: p.name, "data-test": "office-pc", class: p.silent || p.unreadable ? "attention" : "" },
          h("strong", {}, p.name),
          " — ",
          p.silent ? t("officeSilent", { when: ago(now - p.heard_ms_ago, now) }) : t("officeHeard", { when: ago(now - p.heard_ms_ago, now) }),
          p.revoked ? ` (${t("officeRevoked")})` : "",
          p.unreadable ? ` — ${p.unreadable}` : "",
          " — ",
          t("officeKlanten", { count: String(p.klanten) }),
        ),
      ),
    ),
    h("ul", { class: "office-klanten" }, view.klanten.map((k) => h(KlantLine, { key: k.klant, k, now }))),
  );
}

/** The dashboard's Office, when this PC joined one: opened on demand (it asks the hub). */
export function OfficeCard() {
  if (!state.office.value) return null;
  const view = state.officeView.value;
  return h(
    "section",
    { class: "card office-view", "aria-labelledby": "office-view-title", "data-test": "office-view" },
    h("h2", { id: "office-view-title" }, t("officeViewTitle")),
    h("button", { class: "secondary", "data-test": "office-show", disabled: view === "loading", onClick: () => void showOfficeView() }, view === null ? t("officeShow") : t("officeRefresh")),
    view === "loading" ? h("p", { role: "status" }, t("officeLoading")) : view === null ? null : "error" in view ? h("p", { class: "error", role: "alert" }, view.error.message) : h(Shown, { view }),
  );
}
