// Settings → Office (this PC in an office of several PCs, around the office hub) and the
// dashboard's Office card: every klant of every PC, what needs attention first with why and
// whose desk it is at — one screen that says every klant is safe, or which one is not.
import { h } from "preact";
import { inviteOfficePc, joinOffice, leaveOffice, showOfficeView } from "../actions/office";
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
    state.officeLeftNote.value ? h("p", { class: "note", role: "status", "data-test": "office-left-note" }, t("officeLeftNote", { why: state.officeLeftNote.value })) : null,
    office ? h(Joined, {}) : h(JoinForms, {}),
  );
}

/** In the office: who this PC is there, Add a PC (a join code shown once), Leave. */
function Joined() {
  const office = state.office.value!;
  const invite = state.officeInvite.value;
  return h(
    "div",
    { "data-test": "office-joined" },
    h("p", {}, t("officeJoined", { pc: office.pc, hub: office.hub, when: dateTime(office.joined_ms, locale()) })),
    h("h4", {}, t("officeAddPc")),
    h("p", { class: "note" }, t("officeAddPcNote")),
    invite
      ? h(
          "div",
          { class: "card made-key", role: "alert", "data-test": "office-invite" },
          h("p", {}, t("officeInviteMade", { pc: invite.pc })),
          h("code", { class: "key" }, invite.code),
          h("button", { class: "secondary", "data-test": "office-invite-done", onClick: () => (state.officeInvite.value = null) }, t("officeMadeKeyDone")),
        )
      : h(
          "form",
          { class: "office", "data-test": "office-invite-form", onSubmit: (e: Event) => (e.preventDefault(), void inviteOfficePc()) },
          h(TextInput, { id: "office-invite-name", label: t("officePc"), hint: t("officeInviteNameHint"), value: state.officeInviteName.value, onValue: (v) => (state.officeInviteName.value = v) }),
          h("button", { type: "submit", "data-test": "office-invite-make" }, t("officeInviteMake")),
        ),
    h("button", { class: "secondary", "data-test": "office-leave", onClick: () => void leaveOffice() }, t("officeLeave")),
  );
}

/** Not in an office: join with a join code from a PC of the office, or (the first PC, or one
 * the hub's operator gave a key) with the hub's address and a PC key. */
function JoinForms() {
  const draft = state.officeDraft.value;
  return h(
    "div",
    {},
    h(
      "form",
      { class: "office", "data-test": "office-code-form", onSubmit: (e: Event) => (e.preventDefault(), void joinOffice()) },
      h(Input, { id: "office-code", field: "code", label: t("officeCode"), type: "password", hint: t("officeCodeHint") }),
      h("button", { type: "submit", "data-test": "office-join-code" }, t("officeJoin")),
    ),
    h("h4", {}, t("officeWithKey")),
    h(
      "form",
      { class: "office", "data-test": "office-form", onSubmit: (e: Event) => (e.preventDefault(), void joinOffice()) },
      h(Input, { id: "office-hub", field: "hub", label: t("officeHub"), hint: t("officeHubHint") }),
      h(Input, { id: "office-pc", field: "pc", label: t("officePc"), hint: t("officePcHint"), required: false }),
      h(Input, { id: "office-pc-key", field: "pcKey", label: t("officePcKey"), type: "password" }),
      h(Input, { id: "office-key", field: "officeKey", label: t("officeKey"), type: "password", hint: t("officeKeyHint"), required: false }),
      h(Check, { test: "office-own-ca", label: t("officeOwnCa"), checked: draft.ownCa, onToggle: (on) => (state.officeDraft.value = { ...state.officeDraft.value, ownCa: on }) }),
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
    case "on_revoked_pc":
      return t("officeFlagRevoked", { pc: flag.pc });
    case "unconfirmed":
      return t("officeFlagUnconfirmed", { pc: flag.pc, by: flag.by });
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
  // (A revoked PC is no longer the office's: its klanten are flagged when no other PC has them.)
  const safe = attention.length === 0 && view.pcs.every((p) => p.revoked || (!p.silent && p.unreadable === null));
  return h(
    "div",
    {},
    h("p", { role: "status", "data-test": "office-summary", class: safe ? "ok" : "bad" }, safe ? t("officeAllSafe", { count: String(view.klanten.length) }) : t(attention.length === 1 ? "officeAttentionOne" : "officeAttention", { count: String(attention.length), all: String(view.klanten.length) })),
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
          t(p.klanten === 1 ? "officeKlantenOne" : "officeKlanten", { count: String(p.klanten) }),
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
