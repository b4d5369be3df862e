// Loads beacon delivery, the OTLP encoding when that format is asked for and the experiment unit's hash
// when there is one, as modules of their own (chunks of the built package): a page that only wants
// `onReport` does not download them, nor one without `experimentUnit` its hash. They take
// index.js's random ids and the report's fields, with their bounds, from here rather than carry a copy.

import { randomId } from './random-id.js';
import { FIELDS } from './report-fields.js';

/**
 * Resolves to the factory `createBeacons(options, health)`, or to null, with a warning, when the modules
 * cannot load (a deployment that copied `index.js` alone): the meter then works on without beacons.
 */
export async function loadBeacons({ format, experimentUnit }) {
  try {
    const [{ createBeacons }, otlp, unit] = await Promise.all([
      import('./beacons/beacons.js'),
      format === 'otlp' ? import('./beacons/otlp.js') : null,
      experimentUnit ? import('./beacons/experiment-unit.js') : null,
    ]);
    return (options, health) =>
      createBeacons({ ...options, toOtlp: otlp?.toOtlp, experimentUnitHash: unit?.hashExperimentUnit(experimentUnit), randomId, fields: FIELDS }, health);
  } catch (error) {
    console.warn(`llm-ux-meter: beacons disabled, their module could not load (${error}); deploy all of the package's dist/.`);
    return null;
  }
}
