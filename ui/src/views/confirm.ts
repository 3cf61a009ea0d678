// The one confirmation for what cannot be undone (forget a profile, discard a downloaded
// backup): a modal in the page, in the UI's language, its safe answer focused — not the
// webview's `window.confirm`, whose native dialog shows the page's origin as its title,
// English buttons, and which a WebDriver session cannot answer.
import { h } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";
import { t } from "../i18n";
import { state } from "../state";

export function ConfirmDialog() {
  const asked = state.confirming.value;
  const safe = useRef<HTMLButtonElement>(null);
  const dialog = useRef<HTMLDivElement>(null);
  // The safe answer has the focus when it opens; the focus goes back where it was after.
  useLayoutEffect(() => {
    if (!asked) return;
    const before = document.activeElement as HTMLElement | null;
    safe.current?.focus();
    return () => {
      if (before?.isConnected) before.focus();
    };
  }, [asked]);
  if (!asked) return null;
  const answer = (yes: boolean) => {
    state.confirming.value = null;
    asked.resolve(yes);
  };
  // Tab stays inside the dialog; Escape is the safe answer.
  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "Escape") {
      e.preventDefault();
      answer(false);
    } else if (e.key === "Tab") {
      const buttons = [...(dialog.current?.querySelectorAll("button") ?? [])];
      const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
      const next = buttons[(at + (e.shiftKey ? buttons.length - 1 : 1)) % buttons.length];
      e.preventDefault();
      next?.focus();
    }
  };
  return h(
    "div",
    { class: "overlay" },
    h(
      "div",
      { ref: dialog, class: "card dialog", role: "alertdialog", "aria-modal": "true", "aria-labelledby": "confirm-title", "aria-describedby": "confirm-text", "data-test": "confirm", onKeyDown },
      h("h2", { id: "confirm-title" }, t(asked.title)),
      h("p", { id: "confirm-text" }, t(asked.text)),
      h(
        "div",
        { class: "row" },
        h("button", { type: "button", class: "danger", "data-test": "confirm-yes", onClick: () => answer(true) }, t(asked.yes)),
        h("button", { type: "button", class: "secondary", ref: safe, "data-test": "confirm-no", onClick: () => answer(false) }, t("cancel")),
      ),
    ),
  );
}
