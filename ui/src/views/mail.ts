// Settings → E-mail: the office's SMTP server, who hears from Kluis and when (each failure, or
// a daily report), with Send test. The password goes to the keyring; it never comes back.
import { h } from "preact";
import { removeMail, saveMail, testMail } from "../actions/mail";
import { t } from "../i18n";
import { mailShown, state, type MailDraft } from "../state";
import { Check, TextInput } from "./fields";

/** A field of the form, bound to the draft: what is typed goes to the state at once. */
function Input({ id, field, label, type = "text", hint, required = true }: { id: string; field: Exclude<keyof MailDraft, "daily">; label: string; type?: string; hint?: string; required?: boolean }) {
  const draft = mailShown.value;
  const placeholder = type === "password" && state.mail.value?.password_saved ? t("keepSecret") : undefined;
  const onValue = (value: string) => (state.mailDraft.value = { ...draft, [field]: value });
  return h(TextInput, { id, label, hint, type, required, placeholder, value: draft[field], onValue });
}

export function MailSettingsForm() {
  const saved = state.mail.value;
  const draft = mailShown.value;
  const test = state.mailTest.value;
  return h(
    "section",
    { "aria-labelledby": "mail-title" },
    h("h3", { id: "mail-title" }, t("mailTitle")),
    h("p", { class: "note" }, t("mailNote")),
    state.mailProblem.value ? h("p", { class: "error", role: "alert", "data-test": "mail-problem" }, state.mailProblem.value.message) : null,
    h(
      "form",
      { class: "mail", "data-test": "mail-form", onSubmit: (e: Event) => (e.preventDefault(), void saveMail()) },
      h(Input, { id: "mail-server", field: "server", label: t("mailServer"), hint: t("mailServerHint") }),
      h(Input, { id: "mail-port", field: "port", label: t("mailPort"), type: "number" }),
      h(Input, { id: "mail-username", field: "username", label: t("mailUsername"), required: false }),
      h(Input, { id: "mail-password", field: "password", label: t("mailPassword"), type: "password", required: false }),
      h(Input, { id: "mail-from", field: "from", label: t("mailFrom") }),
      h(Input, { id: "mail-to", field: "to", label: t("mailTo"), hint: t("mailToHint") }),
      h(Check, { test: "mail-daily", label: t("mailDaily"), checked: draft.daily, onToggle: (on) => (state.mailDraft.value = { ...draft, daily: on }) }),
      draft.daily ? h(Input, { id: "mail-at", field: "at", label: t("mailAt"), type: "time" }) : null,
      h(
        "div",
        { class: "row" },
        h("button", { type: "submit", "data-test": "mail-save", disabled: state.mailDraft.value === null }, t("save")),
        h("button", { type: "button", class: "secondary", "data-test": "mail-test", disabled: !saved || test === "testing", onClick: () => void testMail() }, t("monitorTest")),
        saved ? h("button", { type: "button", class: "secondary", "data-test": "mail-remove", onClick: () => void removeMail() }, t("mailRemove")) : null,
      ),
    ),
    h(
      "p",
      { role: "status", "data-test": "mail-test-result" },
      test === "ok" ? t("mailTestOk") : test && typeof test === "object" ? `${t("mailTestFailed")}: ${test.error.message}` : "",
    ),
  );
}
