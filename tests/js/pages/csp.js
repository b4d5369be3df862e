// Loaded under a CSP without 'wasm-unsafe-eval': the meter must come up disabled and the app unharmed.
import { recordPageProblems } from './page-problems.js';
import { createMeter } from '/dist/index.js';

recordPageProblems();

const reports = [];
const meter = await createMeter({ onReport: (r) => reports.push(r) });
meter.installFetch();
const response = await fetch('/tests/fixtures/streams/openai-basic.sse');
await response.text();
window.result = { enabled: meter.enabled, status: response.status, report: reports[0] ?? null };
