// Retry-After in milliseconds: delay-seconds or an HTTP date; null when absent or unreadable.

export function retryAfterMs(value, now = Date.now()) {
  if (value == null || value === '') return null;
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}
