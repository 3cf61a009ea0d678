// Settings → copies off this computer → "Add an SFTP server": a folder on a NAS or a server as
// a copy target. "Connect" shows the host key the server presents (read without logging in);
// the office compares it with the server's own and "Trust and add" pins it. The password (or
// the key's passphrase) goes to Rust once, with that click, and to the keyring there; a key
// file is picked in Rust's dialog (the page names no file).
import { h } from "preact";
import { addCopySftp, connectSftp } from "../actions/settings";
import { t, type Key } from "../i18n";
import { state, type SftpDraft } from "../state";
import { Field, TextInput } from "./fields";

/** A field of the SFTP form, bound to its draft; a change to the server's address forgets
 * the key it showed (another server must be met anew). */
function Input({ id, field, label, hint, type, required }: { id: string; field: "host" | "port" | "user" | "path" | "secret"; label: Key; hint?: Key; type?: string; required?: boolean }) {
  const draft = state.sftpDraft.value as SftpDraft;
  const forgets = field === "host" || field === "port";
  const onValue = (value: string) => (state.sftpDraft.value = { ...draft, [field]: value, shown: forgets ? null : draft.shown });
  return h(TextInput, { id, label: t(label), hint: hint ? t(hint) : undefined, type, required, value: draft[field], onValue });
}

/** The key the server showed, to compare, and the choice to trust it. */
function Shown({ draft }: { draft: SftpDraft }) {
  if (!draft.shown) return null;
  return h(
    "div",
    { class: "notice", role: "status", "data-test": "sftp-shown" },
    h("p", {}, t("sftpShown", { host: draft.host })),
    h("p", {}, h("code", { "data-test": "sftp-fingerprint" }, draft.shown.fingerprint), ` (${draft.shown.algorithm})`),
    h("p", { class: "note" }, t("sftpCompare")),
  );
}

export function SftpForm() {
  const draft = state.sftpDraft.value;
  if (!draft) return null;
  const name = state.copyTargetName.value;
  const submit = (e: Event) => (e.preventDefault(), void (draft.shown ? addCopySftp() : connectSftp()));
  return h(
    "form",
    { class: "bucket", "data-test": "sftp-form", onSubmit: submit },
    h("div", { class: "row" }, h(Input, { id: "sftp-host", field: "host", label: "sftpHost", hint: "sftpHostHint" }), h(Input, { id: "sftp-port", field: "port", label: "sftpPort", type: "number" })),
    h(Input, { id: "sftp-user", field: "user", label: "sftpUser" }),
    h(Input, { id: "sftp-path", field: "path", label: "sftpPath", hint: "sftpPathHint" }),
    h(
      Field,
      { id: "sftp-login", label: t("sftpLogin") },
      h(
        "select",
        { id: "sftp-login", "data-test": "sftp-login", value: draft.login, onChange: (e: Event) => (state.sftpDraft.value = { ...draft, login: (e.target as HTMLSelectElement).value as SftpDraft["login"] }) },
        h("option", { value: "password" }, t("sftpLoginPassword")),
        h("option", { value: "key" }, t("sftpLoginKey")),
      ),
    ),
    draft.login === "key"
      ? h(Input, { id: "sftp-secret", field: "secret", label: "sftpPassphrase", hint: "sftpKeyHint", type: "password", required: false })
      : h(Input, { id: "sftp-secret", field: "secret", label: "sftpPassword", type: "password" }),
    h(Shown, { draft }),
    h(
      "div",
      { class: "row" },
      draft.shown
        ? h("button", { type: "submit", "data-test": "sftp-trust", disabled: name.trim() === "" }, t("sftpTrust"))
        : h("button", { type: "submit", "data-test": "sftp-connect" }, t("sftpConnect")),
      h("button", { type: "button", class: "secondary", "data-test": "sftp-cancel", onClick: () => (state.sftpDraft.value = null) }, t("cancel")),
    ),
  );
}
