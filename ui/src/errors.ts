// What a person reads about an error: a title and the advice that fits that failure, in the
// UI's language, for every code the Rust side can send (the compiler refuses a missing one);
// Rust's own message — the technical detail — goes behind "Details".
import { h } from "preact";
import type { UiError } from "./api";
import { t, type Key } from "./i18n";

export type ShownCode = UiError["code"];

export const errorText: Record<ShownCode, { title: Key; advice: Key }> = {
  auth_failed: { title: "errAuthFailed", advice: "errAuthFailedAdvice" },
  permission_denied: { title: "errPermissionDenied", advice: "errPermissionDeniedAdvice" },
  callback_timeout: { title: "errCallbackTimeout", advice: "errCallbackTimeoutAdvice" },
  service_error: { title: "errServiceError", advice: "errServiceErrorAdvice" },
  network: { title: "errNetwork", advice: "errNetworkAdvice" },
  file_host_unreachable: { title: "errFileHostUnreachable", advice: "errFileHostUnreachableAdvice" },
  certificate: { title: "errCertificate", advice: "errCertificateAdvice" },
  download_failed: { title: "errDownloadFailed", advice: "errDownloadFailedAdvice" },
  bad_response: { title: "errBadResponse", advice: "errBadResponseAdvice" },
  config: { title: "errConfig", advice: "errConfigAdvice" },
  io: { title: "errIo", advice: "errIoAdvice" },
  cancelled: { title: "errCancelled", advice: "errCancelledAdvice" },
  interrupted: { title: "errInterrupted", advice: "errInterruptedAdvice" },
  not_resumable: { title: "errNotResumable", advice: "errNotResumableAdvice" },
  backups_damaged: { title: "errBackupsDamaged", advice: "errBackupsDamagedAdvice" },
  partly_restored: { title: "errPartlyRestored", advice: "errPartlyRestoredAdvice" },
  keyring: { title: "errKeyring", advice: "errKeyringAdvice" },
  not_found: { title: "errNotFound", advice: "errNotFoundAdvice" },
  invalid_state: { title: "errInvalidState", advice: "errInvalidStateAdvice" },
  mail: { title: "errMail", advice: "errMailAdvice" },
  update: { title: "errUpdate", advice: "errUpdateAdvice" },
  internal: { title: "errInternal", advice: "errInternalAdvice" },
};

/** Codes whose Rust message names what to change (which setting): shown, not hidden. */
const messageIsTheAdvice: ReadonlySet<ShownCode> = new Set(["config"]);

export function errorTitle(e: UiError): string {
  return t((errorText[e.code] ?? errorText.internal).title);
}

/** What the server sent when its certificate was not trusted: to compare, not to trust. */
function Presented({ presented }: { presented: NonNullable<UiError["presented"]> }) {
  return h(
    "div",
    { class: "presented", "data-test": "presented-certificate" },
    h("p", {}, t("certPresented", { subject: presented.subject, issuer: presented.issuer })),
    h("code", { class: "fingerprint" }, presented.sha256),
    presented.top
      ? h("div", {}, h("p", {}, t("certChainTop", { subject: presented.top.subject })), h("code", { class: "fingerprint" }, presented.top.sha256))
      : null,
  );
}

/** The advice, and Rust's message (behind "Details" unless it is the advice itself). */
export function ErrorBody({ error, testId }: { error: UiError; testId?: string }) {
  const text = errorText[error.code] ?? errorText.internal;
  const message = h("span", { "data-test": testId }, error.message);
  if (messageIsTheAdvice.has(error.code)) return h("p", {}, t(text.advice), " ", message);
  return h(
    "div",
    {},
    h("p", {}, t(text.advice)),
    error.presented ? h(Presented, { presented: error.presented }) : null,
    h("details", {}, h("summary", {}, t("details")), h("p", {}, message)),
  );
}
