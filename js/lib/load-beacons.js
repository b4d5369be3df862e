// Loads beacon delivery, and the OTLP encoding when that format is asked for, as modules of their own
// (chunks of the built package): a page that only wants `onReport` does not download them. They take
// index.js's random ids and the report's fields, with their bounds, from here rather than carry a copy.

import { randomId } from './random-id.js';
import { FIELDS } from './report-fields.js';

/**
 * Resolves to the factory `createBeacons(options, health)`, or to null, with a warning, when the modules
 * cannot load (a deployment that copied `index.js` alone): the meter then works on without beacons.
 */
export async function loadBeacons(format) {
  try {
    const [{ createBeacons }, otlp] = await Promise.all([
      import('./beacons/beacons.js'),
      format === 'otlp' ? import('./beacons/otlp.js') : null,
    ]);
    return (options, health) => createBeacons({ ...options, toOtlp: otlp?.toOtlp, randomId, fields: FIELDS }, health);
  } catch (error) {
    console.warn(`llm-ux-meter: beacons disabled, their module could not load (${error}); deploy all of the package's dist/.`);
    return null;
  }
}
