/** The errno name of a host error (ECONNRESET, ...), or null. */
export function errnoOf(err) {
  const code = err && err.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : null;
}

// The codes of a name the resolver could not give an address for
// (dns.lookup's getaddrinfo(3) failures, as Node names them).
const RESOLVE_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME']);

/** The resolver's code of a host error (a name with no address), or null. */
export function resolveCodeOf(err) {
  const code = err && err.code;
  return RESOLVE_CODES.has(code) ? code : null;
}
