// Settings → E-mail.
import { api } from "../api";
import { mailInputOf, state } from "../state";
import { guarded, sendTest } from "./run";

/** Settings → E-mail saved (checked by the Rust side, which says what is wrong); the form
 * then shows the saved settings. */
export function saveMail(): Promise<void> {
  const draft = state.mailDraft.value;
  if (!draft) return Promise.resolve();
  return guarded(async () => {
    state.mail.value = await api.setMail(mailInputOf(draft));
    state.mailProblem.value = null;
    state.mailDraft.value = null;
    state.mailTest.value = null;
  });
}

/** No more e-mail: the settings and the saved password removed. */
export function removeMail(): Promise<void> {
  return guarded(async () => {
    await api.removeMail();
    state.mail.value = null;
    state.mailProblem.value = null;
    state.mailDraft.value = null;
    state.mailTest.value = null;
  });
}

/** "Send test": a mail now, through the saved settings; said whether it went. */
export function testMail(): Promise<void> {
  return sendTest(state.mailTest, api.testMail);
}
