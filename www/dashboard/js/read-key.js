// The collector's read key (`--read-key`): asked for once, when the API first answers 401, and kept
// for this tab only (sessionStorage: gone when the tab closes, never sent to another origin). While
// the form shows, every request waits for the key typed there instead of being refused too.
import { byId, replaceChildren } from './dom.js';

const STORAGE_KEY = 'llm-ux-read-key';

let asking = null; // the pending key while the form shows

/** The key to send (null: none): the tab's, or while the form shows, the one about to be typed. */
export function currentKey(signal) {
  return asking ? abortable(asking, signal) : Promise.resolve(sessionStorage.getItem(STORAGE_KEY));
}

/**
 * Shows the form after the API refused the key `refused` (null: none was sent), unless another
 * request already replaced that key, and resolves with the key typed. Rejects with the abort reason
 * when `signal` aborts first.
 */
export function askForKey(refused, signal) {
  const stored = sessionStorage.getItem(STORAGE_KEY);
  if (!asking && stored !== null && stored !== refused) return Promise.resolve(stored);
  asking ??= new Promise((resolve) => {
    const form = byId('read-key');
    const input = byId('read-key-input');
    replaceChildren(byId('read-key-problem'), refused === null ? "This collector's analytics need its read key." : 'That key was not accepted: check it and try again.');
    form.hidden = false;
    input.value = '';
    input.focus();
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const key = input.value.trim();
      sessionStorage.setItem(STORAGE_KEY, key);
      form.hidden = true;
      asking = null;
      resolve(key);
    }, { once: true });
  });
  return abortable(asking, signal);
}

function abortable(promise, signal) {
  if (!signal) return promise;
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve);
  });
}
