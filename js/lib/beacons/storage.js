// Records that could not be sent before the page went away wait in localStorage (bounded) and are
// sent on the next page load of the same origin.

const KEY = 'llm-ux-meter:unsent';

/** Takes (and removes) the stored records. */
export function takeStored() {
  try {
    const stored = localStorage.getItem(KEY);
    localStorage.removeItem(KEY);
    const records = JSON.parse(stored); // null when there is none
    return Array.isArray(records) ? records : [];
  } catch {
    return [];
  }
}

/** Stores `records` after any already stored, newest kept within `maxBytes`; returns how many were dropped. */
export function store(records, maxBytes) {
  if (records.length === 0) return 0;
  try {
    const all = [...takeStored(), ...records];
    for (let dropped = 0; dropped < all.length; dropped++) {
      const json = JSON.stringify(all.slice(dropped));
      if (json.length <= maxBytes) {
        localStorage.setItem(KEY, json);
        return dropped;
      }
    }
    return all.length;
  } catch {
    return records.length;
  }
}
