/** The errno name of a host error (ECONNRESET, ...), or null. */
export function errnoOf(err) {
  const code = err && err.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : null;
}
