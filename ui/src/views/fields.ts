// Form widgets every view's forms share: a labelled field, a labelled text input and a labelled
// checkbox. (A leaf:
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

/** A labelled text input (marked `id` for tests too) showing `value`; `onValue` gets each edit.
 * A password input is never offered for the browser's autofill. */
export function TextInput({ id, label, hint, value, onValue, type = "text", required = true, placeholder }: { id: string; label: string; hint?: string; value: string; onValue: (value: string) => void; type?: string; required?: boolean; placeholder?: string }) {
  return h(
    Field,
    { id, label, hint },
    h("input", {
      id,
      type,
      required,
      "data-test": id,
      autocomplete: type === "password" ? "new-password" : "off",
      "aria-describedby": hint ? `${id}-hint` : undefined,
      placeholder,
      value,
      onInput: (e: Event) => onValue((e.target as HTMLInputElement).value),
    }),
  );
}
