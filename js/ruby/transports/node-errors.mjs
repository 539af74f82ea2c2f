// What MRI says for what Node reports: an error on an open socket, and a
// failed TLS handshake in OpenSSL's words (the ones MRI linked with
// Debian 12's OpenSSL prints), whatever the runtime's TLS library calls it.
// Used by node-connect.mjs and both Node transports.
import { errnoOf } from './errno.mjs';

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** [Ruby class, message] for an error on an open socket. */
export function socketError(e) {
  const code = errnoOf(e);
  if (code) return [`Errno::${code}`, ''];
  // TLS after the handshake (an alert: the server wanted a client
  // certificate...): what MRI's SSLSocket#sysread raises
  const reason = e && typeof e.code === 'string' && e.code.startsWith('ERR_SSL_') ? e.reason || String(e.message).split(':')[5] : null;
  if (reason) return ['OpenSSL::SSL::SSLError', `SSL_read: ${mriReason(reason)}`];
  return ['IOError', e && e.message ? e.message : String(e)];
}

// OpenSSL's wording for what Node reports while verifying a certificate.
const VERIFY_TEXT = {
  DEPTH_ZERO_SELF_SIGNED_CERT: 'self-signed certificate',
  SELF_SIGNED_CERT_IN_CHAIN: 'self-signed certificate in certificate chain',
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: 'unable to verify the first certificate',
  UNABLE_TO_GET_ISSUER_CERT_LOCALLY: 'unable to get local issuer certificate',
  UNABLE_TO_GET_ISSUER_CERT: 'unable to get issuer certificate',
  CERT_HAS_EXPIRED: 'certificate has expired',
  CERT_NOT_YET_VALID: 'certificate is not yet valid',
  CERT_REVOKED: 'certificate revoked',
  CERT_UNTRUSTED: 'certificate not trusted',
  CERT_REJECTED: 'certificate rejected',
};

/**
 * OpenSSL's message for a failed handshake with host:port (name: the one
 * checked against the certificate; address: the one connected to), as
 * MRI's SSL_connect error says it.
 */
export function sslMessage(e, host, port, name = host, address = null) {
  const code = e && e.code;
  // (the address connected to, as MRI's peeraddr=)
  const peer = `peeraddr=${address || host}:${port}`;
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
    // OpenSSL checks a name in the handshake (net/http gives it the name,
    // not an IP address, which post_connection_check checks after)
    if (isIpAddress(unbracket(name))) return `hostname "${name}" does not match the server certificate`;
    return `SSL_connect returned=1 errno=0 ${peer} state=error: certificate verify failed (hostname mismatch)`;
  }
  if (code && VERIFY_TEXT[code]) {
    return `SSL_connect returned=1 errno=0 ${peer} state=error: certificate verify failed (${VERIFY_TEXT[code]})`;
  }
  const reason = (e && e.reason) || (e && e.message) || String(e);
  return `SSL_connect returned=1 errno=0 ${peer} state=error: ${mriReason(reason)}`;
}

// OpenSSL 3.0's words for a TLS alert, which MRI linked with it (Debian
// 12's) says, whatever the runtime's TLS library calls it: OpenSSL 3.2 and
// later (Node 22+) renamed the alerts SSLv3 defined ("ssl/tls alert
// handshake failure" for "sslv3 alert handshake failure"), BoringSSL (Bun)
// gives the reason's name (SSLV3_ALERT_HANDSHAKE_FAILURE), or
// "reason(1000 + the alert's number)" for one it has no name for, rustls
// (Deno) the alert's ("received fatal alert: HandshakeFailure").
const ALERTS = [
  [10, 'sslv3 alert unexpected message'], [20, 'sslv3 alert bad record mac'], [21, 'tlsv1 alert decryption failed'],
  [22, 'tlsv1 alert record overflow'], [30, 'sslv3 alert decompression failure'], [40, 'sslv3 alert handshake failure'],
  [41, 'sslv3 alert no certificate'], [42, 'sslv3 alert bad certificate'], [43, 'sslv3 alert unsupported certificate'],
  [44, 'sslv3 alert certificate revoked'], [45, 'sslv3 alert certificate expired'], [46, 'sslv3 alert certificate unknown'],
  [47, 'sslv3 alert illegal parameter'], [48, 'tlsv1 alert unknown ca'], [49, 'tlsv1 alert access denied'],
  [50, 'tlsv1 alert decode error'], [51, 'tlsv1 alert decrypt error'], [60, 'tlsv1 alert export restriction'],
  [70, 'tlsv1 alert protocol version'], [71, 'tlsv1 alert insufficient security'], [80, 'tlsv1 alert internal error'],
  [86, 'tlsv1 alert inappropriate fallback'], [90, 'tlsv1 alert user cancelled'], [100, 'tlsv1 alert no renegotiation'],
  [109, 'tlsv13 alert missing extension'], [110, 'tlsv1 unsupported extension'], [111, 'tlsv1 certificate unobtainable'],
  [112, 'tlsv1 unrecognized name'], [113, 'tlsv1 bad certificate status response'], [114, 'tlsv1 bad certificate hash value'],
  [115, 'tlsv1 alert unknown psk identity'], [116, 'tlsv13 alert certificate required'], [120, 'tlsv1 alert no application protocol'],
];
const ALERT_BY_NAME = new Map(ALERTS.map(([, text]) => [alertKey(text), text]));
const ALERT_BY_NUMBER = new Map(ALERTS);

// An alert's name without its protocol's prefix, letters only, US spelling.
function alertKey(text) {
  return text
    .toLowerCase()
    .replace(/^(received fatal alert: |ssl\/tls[ _]alert[ _]|sslv3[ _]alert[ _]|tlsv13?[ _](alert[ _])?)/, '')
    .replace(/[^a-z]/g, '')
    .replace('unrecognised', 'unrecognized')
    .replace('canceled', 'cancelled');
}

function mriReason(reason) {
  const n = /^reason\((\d+)\)$/.exec(reason);
  if (n) return ALERT_BY_NUMBER.get(Number(n[1]) - 1000) || reason;
  if (!/alert/i.test(reason) && !/^TLSV1_/.test(reason)) return reason;
  return ALERT_BY_NAME.get(alertKey(reason)) || reason;
}

export function isIpAddress(h) {
  return IPV4.test(h) || h.includes(':');
}

// An IPv6 address as Ruby writes it in a URI ("[::1]"), as sockets take it.
export function unbracket(h) {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}
