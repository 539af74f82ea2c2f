// Opening a TCP or TLS connection with node:net / node:tls, and the
// failures of opening as Ruby names them (schema/bridge.mjs lines.failure;
// node-errors.mjs words them). Used by both Node transports (the
// event-loop one in node-async.mjs and the blocking one's I/O thread in
// node-io-worker.mjs).
import net from 'node:net';
import { lookup } from 'node:dns';
import tls from 'node:tls';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { errnoOf, resolveCodeOf } from './errno.mjs';
import { sslMessage, isIpAddress, unbracket } from './node-errors.mjs';
import { connectedNow, connectedFd, fdOf } from './node-fd.mjs';
import { stopStreamReads, bareConnect } from './node-internals.mjs';
import { CLOSED, addressesList, failureLines } from '../constants.mjs';

// Both transports hand writes to the socket in pieces of this size and
// report each one the OS has taken (Conn#onFlushed): a writer waiting for
// room (Net::HTTP's write_timeout) sees the peer's progress.
export const WRITE_PIECE = 64 * 1024;

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

// net.connect's options for a plain connection to spec's host, from spec's
// local end when given.
function plainOptions({ host, port, localAddress, localPort }) {
  const o = { host: unbracket(host), port, noDelay: true };
  if (localAddress) o.localAddress = unbracket(localAddress);
  if (localPort) o.localPort = localPort;
  return o;
}

// A failure of kind with detail (schema/bridge.mjs lines.failure).
const failure = (kind, detail) => failureLines({ kind, detail });

// The failure of an open whose connect(2) failed (see connect).
function connectFailure(e) {
  const code = errnoOf(e);
  return code ? failure('errno', code) : failure('IOError', e && e.message);
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
 * For a verify_callback (schema/bridge.mjs lines.peerCheck): peer the
 * address connected to as OpenSSL's errors name it (peeraddr=), chain the certificates
 * the peer presented, leaf first (DER in base64, comma-separated), nameOk
 * whether the leaf matches the name Net::HTTP checks (Node's rule, as
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
  const nameOk = !!(leaf && leaf.raw && !tls.checkServerIdentity(name, leaf));
  const a = socket.remoteAddress || '';
  const peer = `${a.includes(':') ? `[${a}]` : a}:${socket.remotePort}`;
  return { peer, chain: ders.join(','), nameOk, trusted: trustedCertificates(settings).join('\n') };
}

/**
 * Connects to host:port (TLS when `settings` is given: the JSON of
 * NetHttpWasm.tls_params), from localAddress:localPort when given; with
 * `socket`, starts TLS over that connected socket instead (a tunnel
 * through a proxy). `done(socket, info)` on success, info the values of
 * open's reply after the id (schema/bridge.mjs lines.open: family, address,
 * port; with TLS reused, cert and, with settings.chain, check); `done(null,
 * failure)` on failure (lines.failure: kind one of failureKinds or a Ruby
 * class name). MRI times the TCP connect and the TLS handshake
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
      done(null, CLOSED);
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
  const fail = (kind, detail) => {
    if (socket) socket.destroy();
    finish(null, failure(kind, detail));
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
      if (now) {
        socket.destroy();
        return finish(null, connectFailure(now));
      }
    } else if (settings && settings.noProtocols) {
      // no version left to offer: OpenSSL fails the handshake before sending anything
      const refuse = (s) => fail('ssl', `SSL_connect returned=1 errno=0 peeraddr=${s.remoteAddress}:${port} state=error: no protocols available`);
      if (over) return refuse(over);
      event = 'noProtocols';
      socket = net.connect(base);
      socket.once('connect', () => refuse(socket));
    } else if (settings && settings.server) {
      if (!over) return finish(null, failure('IOError', 'a TLS server starts over an accepted connection'));
      event = 'secure';
      socket = serverSocket(over, settings);
    } else if (settings) {
      event = 'secureConnect';
      let o;
      try {
        o = tlsOptions(base, settings, connectHost);
      } catch (e) {
        if (e && (e.code === 'ENOENT' || e.code === 'ENOTDIR')) return finish(null, failure(`Errno::${e.code}`, e.path));
        throw e;
      }
      socket = tls.connect(o);
      socket.on('session', (s) => sessions.set(socket, s));
    } else {
      socket = net.connect(base);
    }
  } catch (e) {
    return fail('IOError', e && e.message);
  }
  let tcpUp = !!over;
  // (the address connected to, for OpenSSL's error texts: gone once the socket is)
  let remote = over ? over.remoteAddress : null;
  socket.once('connect', () => {
    tcpUp = true;
    remote = socket.remoteAddress;
  });
  if (timeoutMs != null && timeoutMs >= 0) timer = setTimeout(() => fail(settings && tcpUp ? 'ssltimeout' : 'timeout', ''), timeoutMs);
  const onError = (e) => {
    const code = errnoOf(e);
    // (a server's handshake: OpenSSL's SSL_accept)
    if (settings && settings.server && !code) return fail('ssl', sslMessage(e, host, port, host, remote).replace(/^SSL_connect/, 'SSL_accept'));
    if (resolveCodeOf(e)) {
      fail('resolve', resolveCodeOf(e));
    } else if (settings && socket && socket.connecting === false && !socket.authorized && e && e.code && !/^E[A-Z]+$/.test(e.code)) {
      fail('ssl', sslMessage(e, host, port, (settings && settings.servername) || host, remote || (socket && socket.remoteAddress)));
    } else if (code) {
      fail('errno', code);
    } else if (settings) {
      fail('ssl', sslMessage(e, host, port, (settings && settings.servername) || host, remote || (socket && socket.remoteAddress)));
    } else {
      fail('IOError', e && e.message);
    }
  };
  socket.once('error', onError);
  // a client that goes away in a server's handshake (Node reports no error)
  if (settings && settings.server) {
    const gone = () => fail('ssl', `SSL_accept SYSCALL returned=5 errno=0 peeraddr=${remote}:${port} state=error: unexpected eof while reading`);
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
    if (refused) return fail('ssl', `SSL_accept returned=1 errno=0 peeraddr=${remote}:${port} state=error: ${refused}`);
    const info = socketInfo(socket);
    if (settings) {
      // for SSLSocket#session_reused? and #peer_cert: the DER in base64
      const cert = socket.getPeerCertificate();
      info.reused = socket.isSessionReused();
      info.cert = cert && cert.raw ? cert.raw.toString('base64') : '';
      if (settings.chain) info.check = peerChain(socket, settings, connectHost);
    }
    finish(socket, info);
  });
}

/**
 * A plain connection to a loopback address (127.0.0.0/8, ::1), made in
 * this call (see connectAtOnce): { socket, fd, info } (info as connect's
 * done() gets it), or its failure text; null when the kernel has not
 * finished the handshake within connect(2) (a server whose queue of
 * connections to accept is full: the attempt is dropped, and the caller
 * connects as usual). The socket is read and written on its fd by the
 * caller: its stream never reads. Where Node gives one, the socket is a
 * bare TCP handle (connectBare), unless a local end is asked for.
 */
export function connectHere(spec) {
  const family = spec.tls ? 0 : loopbackFamily(spec.host);
  if (!family) return null;
  const bare = connectBare(spec);
  if (bare) return bare;
  const base = plainOptions(spec);
  const address = base.host;
  let socket;
  try {
    socket = connectAtOnce(base, address, family);
  } catch (e) {
    return failure('IOError', e && e.message);
  }
  // (errors come through the fd's system calls)
  socket.on('error', () => {});
  stopStreamReads(socket);
  const now = connectedNow(socket);
  if (now === true) return { socket, fd: fdOf(socket), info: socketInfo(socket) };
  socket.destroy();
  return now ? connectFailure(now) : null;
}

/**
 * connectHere on a bare TCP handle (node-internals.mjs bareConnect); null
 * also where there are none, and for a local end (node:net then).
 */
export function connectBare(spec) {
  const family = spec.tls || spec.localAddress || spec.localPort ? 0 : loopbackFamily(spec.host);
  if (!family) return null;
  const bare = bareConnect(unbracket(spec.host), spec.port, family);
  if (!bare) return null;
  if (bare.error) return connectFailure({ code: bare.error });
  const now = connectedFd(bare.fd);
  if (now === true) {
    bare.setNoDelay(true);
    const { address: local, port } = bare.local();
    return { socket: bare, fd: bare.fd, info: { family: family === 6 ? 'AF_INET6' : 'AF_INET', address: local || '', port: port || 0 } };
  }
  bare.destroy();
  return now ? connectFailure(now) : null;
}

// host's family (4, 6) if a loopback address (127.0.0.0/8, ::1), else 0.
function loopbackFamily(host) {
  const address = unbracket(host);
  const family = net.isIP(address);
  return (family === 4 ? address.startsWith('127.') : address === '::1') ? family : 0;
}

// The connection's local end: { family, address, port } (lines.open).
function socketInfo(socket) {
  const family = socket.localAddress && socket.localAddress.includes(':') ? 'AF_INET6' : 'AF_INET';
  return { family, address: socket.localAddress || '', port: socket.localPort || 0 };
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

// The resolve call's reply for host (IPSocket.getaddress, Resolv): the
// addresses (lists.addresses), or "!" and a failure of kind resolve.
export function resolveName(host, done) {
  lookup(host, { all: true }, (err, addresses) => done(err ? `!${failure('resolve', err.code)}` : addressesList(addresses.map((a) => a.address))));
}
