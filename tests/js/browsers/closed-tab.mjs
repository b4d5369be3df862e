// A closed tab's browser lives on for a moment, as a user's does, so that requests the page sent on its
// way out (the beacon on `pagehide`) can leave before a test's page closing ends the browser or its
// context. Closing the last tab for good at once raced those requests (WebKit, then Firefox, under load).
export const CLOSED_TAB_GRACE_MS = 2000;
