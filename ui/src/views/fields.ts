// Form widgets every view's forms share: a labelled field and a labelled checkbox. (A leaf:
// the views import it, it imports none of them.)
import { h, type ComponentChildren } from "preact";

/** A labelled form field around `input` (given its `id`), with an optional hint. */
export function Field({ id, label, hint, children }: { id: string; label: string; hint?: string; children?: ComponentChildren }) {
  return h("div", { class: "field" }, h("label", { for: id }, label), children, hint ? h("small", { id: `${id}-hint` }, hint) : null);
}

/** A checkbox with its label after it; `onToggle` gets the new state. */
export function Check({ test, label, checked, disabled, onToggle }: { test: string; label: string; checked: boolean; disabled?: boolean; onToggle: (on: boolean) => void }) {
  return h("label", { class: "check" }, h("input", { type: "checkbox", "data-test": test, checked, disabled, onChange: (e: Event) => onToggle((e.target as HTMLInputElement).checked) }), " ", label);
}
