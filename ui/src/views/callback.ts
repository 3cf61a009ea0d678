// Settings → "How the service reaches this computer": the transport choice, its fields, and
// "Test connection". The form's draft lives in the state (switching kinds keeps what was
// typed); the relay secret is sent once to the keyring and never shown again.
import { h } from "preact";
import { callbackDraft, choiceOf, chooseTunnelProgram, editCallback, saveCallback, testCallback } from "../actions/callback";
import { t, type Key } from "../i18n";
import { state, type CallbackDraft } from "../state";
import { Field } from "./fields";

type Kind = CallbackDraft["kind"];
type TextField = "url" | "public_url" | "listen" | "relaySecret";

const choices: [Kind, Key, Key][] = [
  ["relay", "cbRelay", "cbRelayNote"],
  ["direct", "cbDirect", "cbDirectNote"],
  ["tunnel", "cbTunnel", "cbTunnelNote"],
  ["webhook_site", "cbWebhookSite", "cbWebhookSiteNote"],
  ["loopback", "cbLoopback", "cbLoopbackNote"],
];

function Text({ id, label, field, type = "text", placeholder }: { id: string; label: Key; field: TextField; type?: string; placeholder?: string }) {
  const d = callbackDraft();
  return h(
    Field,
    { id, label: t(label) },
    h("input", {
      id,
      type,
      placeholder,
      value: d[field],
      autocomplete: "off",
      spellcheck: false,
      "data-test": id,
      onInput: (e: Event) => editCallback({ [field]: (e.target as HTMLInputElement).value }),
    }),
  );
}

function Fields({ kind }: { kind: Kind }) {
  switch (kind) {
    case "relay":
      return h(
        "div",
        {},
        // "text", not "url": the field may hold several addresses.
        h(Text, { id: "cb-relay-url", label: "cbRelayUrl", field: "url", type: "text" }),
        h(Text, { id: "cb-relay-secret", label: "cbRelaySecret", field: "relaySecret", type: "password", placeholder: state.settings.value.relay_secret_saved ? t("keepSecret") : undefined }),
      );
    case "direct":
      return h("div", {}, h(Text, { id: "cb-public-url", label: "cbPublicUrl", field: "public_url", type: "url" }), h(Text, { id: "cb-listen", label: "cbListen", field: "listen" }));
    case "tunnel":
      // The program is shown, never typed: cloudflared from the PATH, or one picked in a
      // file dialog that Rust opens (a webview that could name a program could run any).
      return h(
        "div",
        { class: "field" },
        h("span", { id: "cb-program-label" }, t("cbProgram")),
        h("code", { "data-test": "cb-program", "aria-labelledby": "cb-program-label" }, callbackDraft().program),
        h("button", { type: "button", "data-test": "cb-choose-program", onClick: () => void chooseTunnelProgram() }, t("cbChooseProgram")),
      );
    default:
      return null;
  }
}

function TestResult() {
  const result = state.callbackTest.value;
  if (result === null) return null;
  if (result === "testing") return h("p", { role: "status" }, t("loading"));
  if ("ok" in result) {
    return h("p", { class: "success", role: "status", "data-test": "cb-test-ok" }, t("cbTestOk", { transport: result.ok.transport, millis: String(result.ok.millis) }));
  }
  return h("div", { class: "error", role: "alert", "data-test": "cb-test-failed" }, h("strong", {}, t("cbTestFailed")), h("p", {}, result.error.message));
}

export function CallbackSettings() {
  const d = callbackDraft();
  const unsaved = JSON.stringify(choiceOf(d)) !== JSON.stringify(state.settings.value.callback) || d.relaySecret !== "";
  return h(
    "form",
    {
      class: "callback",
      "aria-labelledby": "callback-title",
      onSubmit: (e: Event) => {
        e.preventDefault();
        void saveCallback();
      },
    },
    h("h3", { id: "callback-title" }, t("callbackTitle")),
    h("p", { class: "note" }, t("callbackIntro")),
    h(
      "fieldset",
      {},
      h("legend", { class: "offscreen" }, t("callbackTitle")),
      choices.map(([kind, label, note]) =>
        h(
          "label",
          { key: kind, class: "choice" },
          h("input", { type: "radio", name: "callback-kind", value: kind, checked: d.kind === kind, "data-test": `cb-${kind}`, onChange: () => editCallback({ kind }) }),
          h("span", {}, h("strong", {}, t(label)), h("br", {}), h("small", { class: "note" }, t(note))),
        ),
      ),
    ),
    h(Fields, { kind: d.kind }),
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", class: "primary", "data-test": "cb-save" }, t("cbSave")),
      h("button", { type: "button", class: "secondary", "data-test": "cb-test", disabled: !state.selected.value || unsaved, onClick: () => void testCallback() }, t("cbTest")),
      state.callbackSaved.value && !unsaved ? h("span", { role: "status", "data-test": "cb-saved" }, t("cbSaved")) : null,
    ),
    state.selected.value ? null : h("p", { class: "note" }, t("cbTestNeedsProfile")),
    h(TestResult, {}),
  );
}
