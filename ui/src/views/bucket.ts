// Settings → copies off this computer → "Add a bucket": an S3-compatible bucket as a copy
// target (endpoint, region, bucket, prefix, access key, Object Lock). The secret key goes to
// Rust once, with Add, and to the keyring there; it never comes back to the page.
import { h } from "preact";
import { addCopyBucket } from "../actions/settings";
import { t, type Key } from "../i18n";
import { state, type BucketDraft } from "../state";
import { Check, Field, TextInput } from "./fields";

/** A field of the bucket form, bound to its draft. */
function Input({ id, field, label, hint, type, required }: { id: string; field: "endpoint" | "region" | "bucket" | "prefix" | "accessKeyId" | "secretKey" | "lockDays"; label: Key; hint?: Key; type?: string; required?: boolean }) {
  const draft = state.bucketDraft.value as BucketDraft;
  const onValue = (value: string) => (state.bucketDraft.value = { ...draft, [field]: value });
  return h(TextInput, { id, label: t(label), hint: hint ? t(hint) : undefined, type, required, value: draft[field], onValue });
}

export function BucketForm() {
  const draft = state.bucketDraft.value;
  if (!draft) return null;
  const name = state.copyTargetName.value;
  return h(
    "form",
    { class: "bucket", "data-test": "bucket-form", onSubmit: (e: Event) => (e.preventDefault(), void addCopyBucket()) },
    h(Input, { id: "bucket-endpoint", field: "endpoint", label: "bucketEndpoint", hint: "bucketEndpointHint", type: "url" }),
    h(Input, { id: "bucket-region", field: "region", label: "bucketRegion" }),
    h(Input, { id: "bucket-name", field: "bucket", label: "bucketName" }),
    h(Input, { id: "bucket-prefix", field: "prefix", label: "bucketPrefix", hint: "bucketPrefixHint", required: false }),
    h(Check, { test: "bucket-path-style", label: t("bucketPathStyle"), checked: draft.pathStyle, onToggle: (on) => (state.bucketDraft.value = { ...draft, pathStyle: on }) }),
    h(Input, { id: "bucket-access-key", field: "accessKeyId", label: "bucketAccessKey" }),
    h(Input, { id: "bucket-secret-key", field: "secretKey", label: "bucketSecretKey", type: "password" }),
    h(Check, { test: "bucket-own-ca", label: t("bucketOwnCa"), checked: draft.ownCa, onToggle: (on) => (state.bucketDraft.value = { ...draft, ownCa: on }) }),
    h(Check, { test: "bucket-lock", label: t("bucketLock"), checked: draft.lock, onToggle: (on) => (state.bucketDraft.value = { ...draft, lock: on }) }),
    draft.lock
      ? h(
          "div",
          { class: "row" },
          h(Input, { id: "bucket-lock-days", field: "lockDays", label: "bucketLockDays", type: "number" }),
          h(
            Field,
            { id: "bucket-lock-mode", label: t("bucketLockMode"), hint: t("bucketLockModeHint") },
            h(
              "select",
              { id: "bucket-lock-mode", "data-test": "bucket-lock-mode", "aria-describedby": "bucket-lock-mode-hint", value: draft.lockMode, onChange: (e: Event) => (state.bucketDraft.value = { ...draft, lockMode: (e.target as HTMLSelectElement).value as BucketDraft["lockMode"] }) },
              h("option", { value: "governance" }, t("lockGovernance")),
              h("option", { value: "compliance" }, t("lockCompliance")),
            ),
          ),
        )
      : null,
    h(
      "div",
      { class: "row" },
      h("button", { type: "submit", "data-test": "bucket-add", disabled: name.trim() === "" }, t("bucketAdd")),
      h("button", { type: "button", class: "secondary", "data-test": "bucket-cancel", onClick: () => (state.bucketDraft.value = null) }, t("cancel")),
    ),
  );
}
