// Number formatting for tiles, tables and chart axes. Every value the API sends may be null (an empty
// group, no SLO given): that shows as an em dash, never as 0.

export const NONE = '—';

const grouped = (digits) => new Intl.NumberFormat('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
const byDigits = [grouped(0), grouped(1), grouped(2)];

/** Three significant figures at most for small numbers, whole numbers from 100 up (1,234). */
export function number(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return NONE;
  const magnitude = Math.abs(value);
  const digits = magnitude >= 100 || magnitude === 0 ? 0 : magnitude >= 10 ? 1 : 2;
  return byDigits[digits].format(value);
}

export const ms = (value) => (isMissing(value) ? NONE : `${number(value)} ms`);
export const perMinute = (value) => (isMissing(value) ? NONE : `${number(value)}/min`);
export const tokensPerSecond = (value) => (isMissing(value) ? NONE : `${number(value)} tok/s`);
export const count = (value) => (isMissing(value) ? NONE : byDigits[0].format(value));

/** A share in 0..1 as a percentage. */
export function percent(share) {
  if (isMissing(share)) return NONE;
  return `${byDigits[share * 100 >= 99.95 || share === 0 ? 0 : 1].format(share * 100)}%`;
}

/** A difference: `format(value)` with a plus sign when positive (+1.2 ms, -0.5 ms). */
export function signed(value, format) {
  if (isMissing(value)) return NONE;
  return `${value > 0 ? '+' : ''}${format(value)}`;
}

/** A difference of two shares in percentage points. */
export const points = (share) => (isMissing(share) ? NONE : `${number(share * 100)} pp`);

const plain = new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 });

/** A number without trailing zeros (0, 50, 2.5): axis ticks, so those of one axis read alike, and band ends. */
export const tick = (value) => plain.format(value);

/**
 * A band of `from` to `to` ms as its reader would say it, in seconds (`unit` 's') or milliseconds
 * ('ms'): "< 0.5 s" from 0, "0.5–1 s", "≥ 8 s" when `to` is null (no upper end).
 */
export function band(from, to, unit) {
  const show = (v) => tick(unit === 's' ? v / 1000 : v);
  if (isMissing(to)) return `≥ ${show(from)} ${unit}`;
  return from === 0 ? `< ${show(to)} ${unit}` : `${show(from)}–${show(to)} ${unit}`;
}

/** A p-value: small ones as "< 0.001" rather than a string of zeros. */
export function pValue(p) {
  if (isMissing(p)) return NONE;
  return p < 0.001 ? '< 0.001' : p.toFixed(3);
}

const dateTimeFormat = new Intl.DateTimeFormat([], { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
export const dateTime = (epochMs) => dateTimeFormat.format(epochMs);
const clockFormat = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
const hoursMinutesFormat = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
export const clock = (epochMs) => clockFormat.format(epochMs);
export const hoursMinutes = (epochMs) => hoursMinutesFormat.format(epochMs);
/**
 * A time as a datetime-local input's value, local time to the second, in the form the input keeps
 * (no ":00" seconds): "2026-12-07T21:08:15", "2026-12-07T21:09".
 */
export function dateTimeInput(epochMs) {
  const t = new Date(epochMs);
  const two = (n) => String(n).padStart(2, '0');
  const seconds = t.getSeconds() === 0 ? '' : `:${two(t.getSeconds())}`;
  return `${t.getFullYear()}-${two(t.getMonth() + 1)}-${two(t.getDate())}T${two(t.getHours())}:${two(t.getMinutes())}${seconds}`;
}
const monthDayFormat = new Intl.DateTimeFormat([], { month: 'short', day: 'numeric' });
export const monthDay = (epochMs) => monthDayFormat.format(epochMs);

function isMissing(value) {
  return value === null || value === undefined || !Number.isFinite(value);
}
