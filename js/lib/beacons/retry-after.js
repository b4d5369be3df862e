// Retry-After in milliseconds: delay-seconds or an HTTP date; 0 when absent or unreadable.

export function retryAfterMs(value) {
  // Absent (null) or empty, the date below does not parse.
  if (/^\s*\d+\s*$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? 0 : Math.max(0, date - Date.now());
}
