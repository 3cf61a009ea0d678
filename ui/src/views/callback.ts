// Settings → "How the service reaches this computer": the transport choice, its fields, and
// "Test connection". The form keeps a draft across re-renders; the relay secret is sent once
// to the keyring and never shown again.
import * as actions from "../actions";
import type { CallbackChoice } from "../bindings";
import { h } from "../dom";
import { t, type Key } from "../i18n";
import { render, state } from "../state";
import { field } from "./profiles";

type Kind = CallbackChoice["kind"];

const choices: [Kind, Key, Key][] = [
  ["relay", "cbRelay", "cbRelayNote"],
  ["direct", "cbDirect", "cbDirectNote"],
  ["tunnel", "cbTunnel", "cbTunnelNote"],
  ["webhook_site", "cbWebhookSite", "cbWebhookSiteNote"],
  ["loopback", "cbLoopback", "cbLoopbackNote"],
];

/** Field values per kind, so switching back and forth keeps what was typed. */
let draft: { kind: Kind; url: string; public_url: string; listen: string; program: string } | null = null;
let relaySecret = "";

function current(): NonNullable<typeof draft> {
  if (!draft) {
    const saved = state.settings.callback;
    draft = {
      kind: saved.kind,
      url: saved.kind === "relay" ? saved.url : "",
      public_url: saved.kind === "direct" ? saved.public_url : "",
      listen: saved.kind === "direct" ? saved.listen : "127.0.0.1:8787",
      program: saved.kind === "tunnel" ? saved.program : "cloudflared",
    };
  }
  return draft;
}

function setting(d: NonNullable<typeof draft>): CallbackChoice {
  switch (d.kind) {
    case "relay":
      return { kind: "relay", url: d.url };
    case "direct":
      return { kind: "direct", public_url: d.public_url, listen: d.listen };
    case "tunnel":
      return { kind: "tunnel", program: d.program };
    case "webhook_site":
      return { kind: "webhook_site" };
    case "loopback":
      return { kind: "loopback" };
  }
}

function text(id: string, label: Key, key: "url" | "public_url" | "listen" | "program", type = "text"): HTMLElement {
  const d = current();
  const input = h("input", { type, value: d[key], autocomplete: "off", spellcheck: "false", "data-test": id });
  input.addEventListener("input", () => {
    d[key] = input.value;
    state.callbackSaved = false;
  });
  return field(id, t(label), input);
}

function fields(kind: Kind): HTMLElement | null {
  switch (kind) {
    case "relay": {
      const secret = h("input", { type: "password", autocomplete: "off", "data-test": "cb-relay-secret" });
      secret.placeholder = state.settings.relay_secret_saved ? t("keepSecret") : "";
      secret.value = relaySecret;
      secret.addEventListener("input", () => {
        relaySecret = secret.value;
      });
      return h("div", {}, text("cb-relay-url", "cbRelayUrl", "url", "url"), field("cb-relay-secret", t("cbRelaySecret"), secret));
    }
    case "direct":
      return h("div", {}, text("cb-public-url", "cbPublicUrl", "public_url", "url"), text("cb-listen", "cbListen", "listen"));
    case "tunnel": {
      // The program is shown, never typed: cloudflared from the PATH, or one picked in a
      // file dialog that Rust opens (a webview that could name a program could run any).
      const saved = state.settings.callback;
      const program = saved.kind === "tunnel" ? saved.program : "cloudflared";
      current().program = program;
      return h(
        "div",
        { class: "field" },
        h("span", { id: "cb-program-label" }, t("cbProgram")),
        h("code", { "data-test": "cb-program", "aria-labelledby": "cb-program-label" }, program),
        h("button", { type: "button", "data-test": "cb-choose-program", onclick: () => void actions.chooseTunnelProgram() }, t("cbChooseProgram")),
      );
    }
    default:
      return null;
  }
}

function testResult(): HTMLElement | null {
  const result = state.callbackTest;
  if (result === null) return null;
  if (result === "testing") return h("p", { role: "status" }, t("loading"));
  if ("ok" in result) {
    return h("p", { class: "success", role: "status", "data-test": "cb-test-ok" }, t("cbTestOk", { transport: result.ok.transport, millis: String(result.ok.millis) }));
  }
  return h("div", { class: "error", role: "alert", "data-test": "cb-test-failed" }, h("strong", {}, t("cbTestFailed")), h("p", {}, result.error.message));
}

export function callbackSettings(): HTMLElement {
  const d = current();
  const options = choices.map(([kind, label, note]) =>
    h(
      "label",
      { class: "choice" },
      h("input", {
        type: "radio",
        name: "callback-kind",
        value: kind,
        checked: d.kind === kind,
        "data-test": `cb-${kind}`,
        onchange: () => {
          d.kind = kind;
          state.callbackSaved = false;
          state.callbackTest = null;
          render();
        },
      }),
      h("span", {}, h("strong", {}, t(label)), h("br"), h("small", { class: "note" }, t(note))),
    ),
  );
  const unsaved = JSON.stringify(setting(d)) !== JSON.stringify(state.settings.callback) || relaySecret !== "";
  return h(
    "form",
    {
      class: "callback",
      "aria-labelledby": "callback-title",
      onsubmit: (e: Event) => {
        e.preventDefault();
        const secret = relaySecret;
        relaySecret = "";
        void actions.saveCallback({ setting: setting(d), relay_secret: secret || null });
      },
    },
    h("h3", { id: "callback-title" }, t("callbackTitle")),
    h("p", { class: "note" }, t("callbackIntro")),
    h("fieldset", {}, h("legend", { class: "offscreen" }, t("callbackTitle")), ...options),
    fields(d.kind),
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", class: "primary", "data-test": "cb-save" }, t("cbSave")),
      h(
        "button",
        { type: "button", class: "secondary", "data-test": "cb-test", disabled: !state.selected || unsaved, onclick: () => void actions.testCallback() },
        t("cbTest"),
      ),
      state.callbackSaved && !unsaved ? h("span", { role: "status", "data-test": "cb-saved" }, t("cbSaved")) : null,
    ),
    state.selected ? null : h("p", { class: "note" }, t("cbTestNeedsProfile")),
    testResult(),
  );
}

