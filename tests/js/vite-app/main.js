import { createMeter } from 'llm-ux-meter';
import doc from '../../fixtures/replay/openai-timed.json';
import { replay } from '../replay.mjs';

const meter = await createMeter({ dimensions: { scenario: 'vite' } });
window.result = { enabled: meter.enabled, report: replay(meter, doc) };
