// Loads tests/helpers/builds.mjs (owned by the build side), which exports
// `builds`: [{ name, api }].  While it does not exist yet, the differential
// tests still check the oracle itself and skip the comparisons with ours.
import { existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const helper = join(dirname(fileURLToPath(import.meta.url)), '..', 'helpers', 'builds.mjs');

/** { builds, missing }: missing is a reason string when there is nothing to test. */
export async function loadBuilds() {
  if (!existsSync(helper)) return { builds: [], missing: 'tests/helpers/builds.mjs does not exist yet' };
  const mod = await import(pathToFileURL(helper).href); // an error here is a real failure
  const builds = await mod.builds;
  if (!Array.isArray(builds)) throw new Error('tests/helpers/builds.mjs must export an array `builds`');
  return { builds, missing: builds.length ? null : 'tests/helpers/builds.mjs lists no builds' };
}
