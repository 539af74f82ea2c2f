// The codec builds that the differential tests compare with MRI:
// tests/helpers/builds.mjs exports `builds`: [{ name, api }].
import { builds } from '../helpers/builds.mjs';

/** { builds, missing }: there is always at least one build to compare. */
export async function loadBuilds() {
  if (!Array.isArray(builds) || builds.length === 0)
    throw new Error('tests/helpers/builds.mjs selected no build (check NETHTTP_BUILD)');
  return { builds, missing: null };
}
