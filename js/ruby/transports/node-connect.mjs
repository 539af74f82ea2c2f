// Opening a TCP or TLS connection with node:net / node:tls, and the names
// Ruby gives to what can go wrong. Used by both Node transports (the
// event-loop one in node-async.mjs and the blocking one's I/O thread in
// node-io-worker.mjs); the only place that knows Node's socket errors.
import net from 'node:net';
import tls from 'node:tls';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { errnoOf } from './errno.mjs';
import { connectedNow } from './node-fd.mjs';
import { stopStreamReads } from './node-internals.mjs';

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

// Both transports hand writes to the socket in pieces of this size and
// report each one the OS has taken (Conn#onFlushed): a writer waiting for
// room (Net::HTTP's write_timeout) sees the peer's progress.
export const WRITE_PIECE = 64 * 1024;


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

function sslMessage(e, host, port, name = host, address = null) {
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

// Secure contexts by their settings: building one from every root
// certificate costs tens of milliseconds, so each is built once.
const contexts = new Map();
const CONTEXTS_KEPT = 16;

// The certificates a connection with these settings trusts, as PEM texts
// (Ruby verifies the chain itself when a verify_callback is set).
function trustedCertificates(settings) {
  const ca = caCertificates(settings);
  if (!ca.length) return tls.rootCertificates;
  return settings.defaultPaths ? [...tls.rootCertificates, ...ca] : ca;
}

function caCertificates(settings) {
  const ca = [];
  if (settings.ca) ca.push(...settings.ca);
  for (const f of settings.caFiles || []) ca.push(readFileSync(f, 'utf8'));
  // ca_path / X509::Store#add_path of a host folder: every certificate file
  // in it (OpenSSL looks up hashed names; loading them all trusts the same)
  for (const d of settings.caDirs || []) {
    for (const name of readdirSync(d).sort()) {
      let text;
      try {
        text = readFileSync(join(d, name), 'utf8');
      } catch {
        continue;
      }
      if (text.includes('-----BEGIN CERTIFICATE-----')) ca.push(text);
    }
  }
  return ca;
}

function secureContext(settings) {
  const ca = caCertificates(settings);
  const o = {};
  if (ca.length) o.ca = settings.defaultPaths ? [...tls.rootCertificates, ...ca] : ca;
  if (settings.cert) o.cert = settings.cert;
  if (settings.key) o.key = settings.key;
  if (settings.minVersion) o.minVersion = settings.minVersion;
  if (settings.maxVersion) o.maxVersion = settings.maxVersion;
  if (settings.ciphers) o.ciphers = settings.ciphers;
  const key = JSON.stringify([ca, !!settings.defaultPaths, o.cert, o.key, o.minVersion, o.maxVersion, o.ciphers]);
  let ctx = contexts.get(key);
  if (!ctx) {
    ctx = tls.createSecureContext(o);
    if (contexts.size >= CONTEXTS_KEPT) contexts.delete(contexts.keys().next().value);
    contexts.set(key, ctx);
  }
  return ctx;
}

function isIpAddress(h) {
  return IPV4.test(h) || h.includes(':');
}

// An IPv6 address as Ruby writes it in a URI ("[::1]"), as sockets take it.
function unbracket(h) {
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

// net.connect's options for a plain connection to spec's host, from spec's
// local end when given.
function plainOptions({ host, port, localAddress, localPort }) {
  const o = { host: unbracket(host), port, noDelay: true };
  if (localAddress) o.localAddress = unbracket(localAddress);
  if (localPort) o.localPort = localPort;
  return o;
}

// The failure text of an open whose connect(2) failed (see connect).
function connectFailure(e) {
  const code = errnoOf(e);
  return code ? `errno\n${code}` : `IOError\n${e && e.message}`;
}

function tlsOptions(base, settings, connectHost) {
  const o = Object.assign({}, base, { rejectUnauthorized: settings.verify, ALPNProtocols: ['http/1.1'] });
  // Net::HTTP sends SNI and checks the certificate for its address (the
  // name), also when it connects to ipaddr; no SNI for an IP address
  const name = settings.servername ? unbracket(settings.servername) : connectHost;
  if (!isIpAddress(name)) o.servername = name;
  // (also over a tunnel's socket, whose own name is not the server's)
  o.checkServerIdentity = (_host, cert) => tls.checkServerIdentity(name, cert);
  o.secureContext = secureContext(settings);
  if (settings.verify && settings.verifyHostname === false) o.checkServerIdentity = () => undefined;
  // with a verify_callback, Ruby decides (NetHttpWasm.verify_peer)
  if (settings.chain) o.rejectUnauthorized = false;
  if (settings.session) o.session = nodeSessions.get(settings.session) || Buffer.from(settings.session, 'base64');
  return o;
}

// A server's side of a handshake over an accepted connection (SSLSocket#accept):
// its certificate and key from settings; with verify, the client's
// certificate is asked for (and checked once it is up: see connect).
function serverSocket(over, settings) {
  return new tls.TLSSocket(over, { isServer: true, secureContext: secureContext(settings), requestCert: !!settings.verify, rejectUnauthorized: false });
}

// Why a server's handshake that went through is refused, as OpenSSL's
// verify with VERIFY_PEER (and FAIL_IF_NO_PEER_CERT) refuses it; null if not.
function clientRefused(socket, settings) {
  if (!settings.verify) return null;
  const cert = socket.getPeerCertificate();
  if (!cert || !cert.raw) return settings.failIfNoPeerCert ? 'peer did not return a certificate' : null;
  return socket.authorized ? null : `certificate verify failed (${VERIFY_TEXT[socket.authorizationError] || socket.authorizationError})`;
}

// The TLS session each connection last received (a TLS 1.3 server sends
// its tickets after the handshake), for Ruby to resume later.
const sessions = new WeakMap();

// Node 22.23, 24.17, 26.3.1 and later hand a session as
// "\0nodejs:tls:session:<version>\0", a 16-bit big-endian length and the
// server name it was verified for, then OpenSSL's DER; they take either form
// back, but offer a session to a server they verify only in that form and only
// under that name. Ruby holds the DER (as MRI's Session does); the form Node
// gave is kept here, by DER, for the connections Ruby resumes it on.
const NODE_SESSION = Buffer.from('\0nodejs:tls:session:');
const NODE_SESSIONS_KEPT = 64;
const nodeSessions = new Map();

/** OpenSSL's DER of a session Node handed over, or null if not recognised. */
export function sessionDer(s) {
  if (s[0] === 0x30) return s;
  if (!s.subarray(0, NODE_SESSION.length).equals(NODE_SESSION)) return null;
  const name = s.indexOf(0, NODE_SESSION.length) + 1;
  if (name === 0 || name + 2 > s.length) return null;
  const der = s.subarray(name + 2 + s.readUInt16BE(name));
  return der[0] === 0x30 ? der : null;
}

/** The TLS session socket last received, DER in base64 ("" if none). */
export function tlsSession(socket) {
  const s = sessions.get(socket);
  const der = s && sessionDer(s);
  if (!der) return '';
  const text = der.toString('base64');
  if (der !== s) {
    nodeSessions.delete(text);
    if (nodeSessions.size >= NODE_SESSIONS_KEPT) nodeSessions.delete(nodeSessions.keys().next().value);
    nodeSessions.set(text, s);
  }
  return text;
}

/**
 * For a verify_callback: "peer\nchain\nnameOk\ntrusted", peer the
 * address connected to as OpenSSL's errors name it (peeraddr=), chain the certificates
 * the peer presented, leaf first (DER in base64, comma-separated), nameOk
 * "1" when the leaf matches the name Net::HTTP checks (Node's rule, as
 * without a callback), trusted the PEMs the connection trusts.
 */
function peerChain(socket, settings, connectHost) {
  const ders = [];
  const seen = new Set();
  for (let c = socket.getPeerCertificate(true); c && c.raw && !seen.has(c.fingerprint256); c = c.issuerCertificate) {
    seen.add(c.fingerprint256);
    ders.push(c.raw.toString('base64'));
  }
  const name = settings.servername ? unbracket(settings.servername) : connectHost;
  const leaf = socket.getPeerCertificate();
  const nameOk = leaf && leaf.raw && !tls.checkServerIdentity(name, leaf) ? 1 : 0;
  const a = socket.remoteAddress || '';
  const peer = `${a.includes(':') ? `[${a}]` : a}:${socket.remotePort}`;
  return `${peer}\n${ders.join(',')}\n${nameOk}\n${trustedCertificates(settings).join('\n')}`;
}

/**
 * Connects to host:port (TLS when `settings` is given: the JSON of
 * NetHttpWasm.tls_params), from localAddress:localPort when given; with
 * `socket`, starts TLS over that connected socket instead (a tunnel
 * through a proxy). `done(socket, info)` on success, with info
 * "family\naddress\nport"; `done(null, "kind\ndetail")` on failure, kind
 * one of timeout, ssltimeout, errno, resolve, ssl or a Ruby class name (see
 * NetHttpWasm::Socket.open). MRI times the TCP connect and the TLS handshake
 * separately; the handshake's timeout is a bare Net::OpenTimeout.
 */
export function connect(spec, done) {
  const { host, port, tls: settings, timeoutMs, socket: over } = spec;
  // a socket connected at once (connectAtOnce) that its event loop has not
  // reported yet: TLS starts once it has
  if (over && over.connecting) {
    const go = () => {
      over.removeListener('close', gone);
      connect(spec, done);
    };
    const gone = () => {
      over.removeListener('connect', go);
      done(null, 'IOError\nclosed stream');
    };
    over.once('connect', go);
    over.once('close', gone);
    return;
  }
  let finished = false;
  let socket = null;
  let timer = null;
  const finish = (s, info) => {
    if (finished) return;
    finished = true;
    if (timer) clearTimeout(timer);
    done(s, info);
  };
  const fail = (text) => {
    if (socket) socket.destroy();
    finish(null, text);
  };
  const connectHost = unbracket(host);
  const base = over ? { socket: over } : plainOptions(spec);
  let event = 'connect';
  // a plain connection to an IP address: connected in this call when the
  // kernel can tell at once (see connectAtOnce)
  const family = !settings && !over ? net.isIP(connectHost) : 0;
  try {
    if (family) {
      socket = connectAtOnce(base, connectHost, family);
      const now = connectedNow(socket);
      if (now === true) return finish(socket, socketInfo(socket));
      if (now) return fail(connectFailure(now));
    } else if (settings && settings.noProtocols) {
      // no version left to offer: OpenSSL fails the handshake before sending anything
      const refuse = (s) => fail(`ssl\nSSL_connect returned=1 errno=0 peeraddr=${s.remoteAddress}:${port} state=error: no protocols available`);
      if (over) return refuse(over);
      event = 'noProtocols';
      socket = net.connect(base);
      socket.once('connect', () => refuse(socket));
    } else if (settings && settings.server) {
      if (!over) return finish(null, 'IOError\na TLS server starts over an accepted connection');
      event = 'secure';
      socket = serverSocket(over, settings);
    } else if (settings) {
      event = 'secureConnect';
      let o;
      try {
        o = tlsOptions(base, settings, connectHost);
      } catch (e) {
        if (e && (e.code === 'ENOENT' || e.code === 'ENOTDIR')) return finish(null, `Errno::${e.code}\n${e.path}`);
        throw e;
      }
      socket = tls.connect(o);
      socket.on('session', (s) => sessions.set(socket, s));
    } else {
      socket = net.connect(base);
    }
  } catch (e) {
    return fail(`IOError\n${e && e.message}`);
  }
  let tcpUp = !!over;
  // (the address connected to, for OpenSSL's error texts: gone once the socket is)
  let remote = over ? over.remoteAddress : null;
  socket.once('connect', () => {
    tcpUp = true;
    remote = socket.remoteAddress;
  });
  if (timeoutMs != null && timeoutMs >= 0) timer = setTimeout(() => fail(settings && tcpUp ? 'ssltimeout\n' : 'timeout\n'), timeoutMs);
  const onError = (e) => {
    const code = errnoOf(e);
    // (a server's handshake: OpenSSL's SSL_accept)
    if (settings && settings.server && !code) return fail(`ssl\n${sslMessage(e, host, port, host, remote).replace(/^SSL_connect/, 'SSL_accept')}`);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA' || code === 'EAI_NONAME') {
      fail(`resolve\n${code}`);
    } else if (settings && socket && socket.connecting === false && !socket.authorized && e && e.code && !/^E[A-Z]+$/.test(e.code)) {
      fail(`ssl\n${sslMessage(e, host, port, (settings && settings.servername) || host, remote || (socket && socket.remoteAddress))}`);
    } else if (code) {
      fail(`errno\n${code}`);
    } else if (settings) {
      fail(`ssl\n${sslMessage(e, host, port, (settings && settings.servername) || host, remote || (socket && socket.remoteAddress))}`);
    } else {
      fail(`IOError\n${e && e.message}`);
    }
  };
  socket.once('error', onError);
  // a client that goes away in a server's handshake (Node reports no error)
  if (settings && settings.server) {
    const gone = () => fail(`ssl\nSSL_accept SYSCALL returned=5 errno=0 peeraddr=${remote}:${port} state=error: unexpected eof while reading`);
    socket.once('end', gone);
    socket.once('close', gone);
  }
  socket.once(event, () => {
    if (finished) {
      socket.destroy();
      return;
    }
    socket.removeListener('error', onError);
    const refused = settings && settings.server && clientRefused(socket, settings);
    if (refused) return fail(`ssl\nSSL_accept returned=1 errno=0 peeraddr=${remote}:${port} state=error: ${refused}`);
    let info = socketInfo(socket);
    if (settings) {
      // for SSLSocket#session_reused? and #peer_cert: "1"/"0", the DER in base64
      const cert = socket.getPeerCertificate();
      info += `\n${socket.isSessionReused() ? 1 : 0}\n${cert && cert.raw ? cert.raw.toString('base64') : ''}`;
      if (settings.chain) info += `\n${peerChain(socket, settings, connectHost)}`;
    }
    finish(socket, info);
  });
}

/**
 * A plain connection to a loopback address (127.0.0.0/8, ::1), made in
 * this call (see connectAtOnce): { socket, info } as connect's done()
 * gets them, or its failure text; null when the kernel has not finished
 * the handshake within connect(2) (a server whose queue of connections to
 * accept is full: the attempt is dropped, and the caller connects as
 * usual). The socket is read and written on its fd by the caller: its
 * stream never reads.
 */
export function connectHere(spec) {
  const base = plainOptions(spec);
  const address = base.host;
  const family = net.isIP(address);
  if (spec.tls || !(family === 4 ? address.startsWith('127.') : address === '::1')) return null;
  let socket;
  try {
    socket = connectAtOnce(base, address, family);
  } catch (e) {
    return `IOError\n${e && e.message}`;
  }
  // (errors come through the fd's system calls)
  socket.on('error', () => {});
  stopStreamReads(socket);
  const now = connectedNow(socket);
  if (now === true) return { socket, info: socketInfo(socket) };
  socket.destroy();
  return now ? connectFailure(now) : null;
}

// "family\naddress\nport" of the connection's local end.
function socketInfo(socket) {
  const family = socket.localAddress && socket.localAddress.includes(':') ? 'AF_INET6' : 'AF_INET';
  return `${family}\n${socket.localAddress || ''}\n${socket.localPort || 0}`;
}

// net.connect for an IP address defers connect(2) to the next tick; given
// a name, it looks the name up first, and a lookup that answers at once
// has connect(2) made before net.connect returns. So the address goes in
// as a name that our lookup answers with the address: to this host, the
// kernel has done the handshake within connect(2), and connectedNow
// tells (elsewhere it has not: the connection is then awaited as usual).
const DIRECT_NAME = 'net-http-wasm.direct';

function connectAtOnce(base, address, family) {
  return net.connect({ ...base, host: DIRECT_NAME, family, lookup: (_name, _opts, cb) => cb(null, address, family) });
}
