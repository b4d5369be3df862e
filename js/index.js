// Browser entry (bundlers and <script type="module">): the wasm file is fetched next to this module.
import init from './wasm/llm_ux_meter.js';
import { makeCreateMeter } from './meter.js';

export const createMeter = makeCreateMeter(() => init({ module_or_path: new URL('./wasm/llm_ux_meter_bg.wasm', import.meta.url) }));
