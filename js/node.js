// Node entry (tests, server-side replay): the wasm file is read from disk.
import { readFile } from 'node:fs/promises';
import { initSync } from './wasm/llm_ux_meter.js';
import { makeCreateMeter } from './meter.js';

export const createMeter = makeCreateMeter(async () =>
  initSync({ module: await readFile(new URL('./wasm/llm_ux_meter_bg.wasm', import.meta.url)) }),
);
