# frozen_string_literal: true
#
# net-http-wasm: Net::HTTP for ruby.wasm.
#
# Evaluated inside the VM by installNetHttp (js/ruby.mjs), which then calls
# NetHttpWasm.__install with its bridge object. ruby.wasm has neither the
# `socket` nor the `io/wait` extension, no sockets and no threads, so this:
#
#   1. defines stand-ins for `socket` and `io/wait` and marks them loaded, so
#      that `require 'net/http'` works (TCPSocket itself cannot be used);
#   2. replaces Net::HTTP#connect: the host opens the connection (node:net /
#      node:tls in Node, a virtual connection over fetch() in browsers) and
#      NetHttpWasm::Socket is the IO that Net::BufferedIO reads and writes;
#   3. hands the byte work to the codec (a WebAssembly module on the JS side):
#      Net::HTTPGenericRequest#exec sends the request's method, path, header
#      hash and body in one call and the codec writes the bytes;
#      Net::HTTPResponse.read_new and #read_body_0 take the response from the
#      codec's incremental parser, fed with the socket's bytes on the JS side.
#      Everything else (Net::HTTP#request, transport_request, keep-alive,
#      retries, read_timeout, body encodings, Net::HTTPResponse's API) is
#      net/http's own code. NetHttpWasm.codec = false turns step 3 off: then
#      net/http's Ruby code does the byte work over the same sockets.
#
# Blocking waits are JS promises awaited with a fiber switch (as
# JS::Object#await), so Net::HTTP must run inside vm.evalAsync (or
# RbValue#callAsync); anywhere else the first wait raises. Do not make
# requests inside blocks of C-implemented iterators (Array#map, Hash#each,
# each_with_index...): in ruby.wasm an exception raised and rescued after a
# fiber switch there corrupts the VM. Array#each, Integer#times, loop and
# while are fine.
#
# Bytes cross to JS as (address, length) of a String's bytes in the VM's
# memory ([str].pack('p')), and come back written by JS into a String
# allocated here: one copy each way, no base64, no per-byte loop.

require 'js'

# ---- 1. stand-ins for the socket and io/wait extensions ----------------------

unless defined?(::TCPSocket)
  class SocketError < StandardError; end unless defined?(::SocketError)

  class BasicSocket < IO
    def initialize(*)
      raise NotImplementedError, 'net-http-wasm: there are no sockets in ruby.wasm; use Net::HTTP'
    end
  end

  class IPSocket < BasicSocket; end

  class TCPSocket < IPSocket
    # net-http 0.9.1 reads this signature when it loads.
    def initialize(host, port, local_host = nil, local_port = nil, open_timeout: nil)
      raise NotImplementedError, 'net-http-wasm: there are no sockets in ruby.wasm; use Net::HTTP'
    end

    def self.open(*args, **kw)
      new(*args, **kw)
    end
  end

  class TCPServer < TCPSocket; end
  class UDPSocket < IPSocket; end

  class Socket < BasicSocket
    AF_INET = 2
    AF_INET6 = 10
    AF_UNSPEC = 0
    SOCK_STREAM = 1
    SOCK_DGRAM = 2
    IPPROTO_TCP = 6
    IPPROTO_UDP = 17
    SOL_SOCKET = 1
    TCP_NODELAY = 1

    # Ruby >= 3.3 raises this (a SocketError) when a name does not resolve.
    class ResolutionError < SocketError
      attr_reader :error_code
    end

    def self.tcp(host, port, local_host = nil, local_port = nil, connect_timeout: nil, resolv_timeout: nil, open_timeout: nil)
      raise NotImplementedError, 'net-http-wasm: there are no sockets in ruby.wasm; use Net::HTTP'
    end

    def self.gethostname
      'localhost'
    end
  end

  # `require 'socket'` and `require 'io/wait'` now find these as loaded.
  stdlib = $LOAD_PATH.find { |d| d =~ %r{/ruby/\d+\.\d+\.\d+\z} } || $LOAD_PATH.last || '/'
  $LOADED_FEATURES << File.join(stdlib, 'socket.rb') << File.join(stdlib, 'io/wait.rb')
end

require 'net/http'
require 'json'

# ruby.wasm's openssl is built without sockets: it has X509, PKey, Digest...
# but no OpenSSL::SSL. The host does TLS; these are the names Net::HTTP users
# and net/http itself refer to.
begin
  require 'openssl'
rescue LoadError
  module OpenSSL
    class OpenSSLError < StandardError; end
  end
end
unless defined?(OpenSSL::SSL)
  module OpenSSL
    module SSL
      VERIFY_NONE = 0
      VERIFY_PEER = 1
      VERIFY_FAIL_IF_NO_PEER_CERT = 2
      VERIFY_CLIENT_ONCE = 4
      TLS1_VERSION = 0x0301
      TLS1_1_VERSION = 0x0302
      TLS1_2_VERSION = 0x0303
      TLS1_3_VERSION = 0x0304

      class SSLError < OpenSSLError; end

      # Holds settings only: Net::HTTP#connect creates one, as MRI's does.
      class SSLContext
        DEFAULT_PARAMS = { verify_mode: VERIFY_PEER, verify_hostname: true }.freeze
        attr_accessor :verify_mode, :verify_hostname, :ca_file, :ca_path, :cert_store, :cert, :key,
                      :ciphers, :min_version, :max_version, :ssl_version, :timeout, :verify_depth,
                      :verify_callback, :extra_chain_cert, :session_cache_mode

        def initialize(*)
          @verify_mode = VERIFY_NONE
          @verify_hostname = false
        end

        def set_params(params = {})
          DEFAULT_PARAMS.merge(params).each { |k, v| public_send("#{k}=", v) if respond_to?("#{k}=") }
          params
        end
      end
    end
  end
end

module NetHttpWasm
  VERSION = '0.1.0'

  # Raised where the codec's limits (header bytes, fields, body) are passed.
  class LimitError < StandardError; end

  # Raised when fetch() fails (browsers): a network error or a response the
  # page may not read (CORS). MRI would raise at connect; this comes at read.
  class FetchError < SocketError; end

  # records in the receive buffer (js/ruby.mjs)
  R_HEAD = 1
  R_BODY = 2
  R_END = 3
  R_ERROR = 4
  # return codes
  RC_ERROR = -1
  RC_TIMEOUT = -2
  RC_WOULD_BLOCK = -4
  RC_EOF = -5
  NEED_BASE = 16

  # Strings written by JS into Ruby memory are copied out with unpack('aN'),
  # never byteslice'd: a slice may share (not copy) the buffer, which the
  # next read overwrites.
  UNPACK = {}

  BUF_MIN = 64 * 1024
  BUF_MAX = 1024 * 1024

  # net-http >= 0.7 (Ruby 3.5/4.0) adds no default Content-Type to a body.
  DEFAULT_CONTENT_TYPE = Net::HTTPGenericRequest.private_method_defined?(:supply_default_content_type)
  # net-http 0.9 opens with TCPSocket.open(..., open_timeout:) (4.0); older
  # versions wrap the whole connect in Timeout.timeout (3.4).
  SOCKET_OPEN_TIMEOUT = Net::HTTP.private_method_defined?(:timeouted_connect)

  class << self
    attr_reader :bridge, :profile, :transport

    # Whether the codec does the byte work (default true). false: net/http's
    # own Ruby code reads and writes the messages over the same sockets.
    def codec?
      @codec
    end

    def codec=(on)
      @codec = on ? true : false
    end

    # Called by installNetHttp.
    def __install(bridge, config)
      cfg = JSON.parse(config.to_s)
      @bridge = bridge
      @codec = cfg['codec'] ? true : false
      @profile = cfg['profile']
      @transport = cfg['transport']
      @errors = {}
      true
    end

    # The address of a String's bytes in the VM's linear memory.
    def addr(str)
      [str].pack('p').unpack1('J')
    end

    # Waits for a JS promise (fiber switch, as JS::Object#await).
    def await(promise)
      JS.promise_scheduler.await(promise)
    end

    def ms(seconds)
      seconds.nil? ? -1 : (seconds * 1000).ceil
    end

    # Raises the error the bridge reported ("Class\nmessage").
    def raise_last_error
      raise_payload(@bridge.call(:error).to_s.b)
    end

    def raise_payload(payload)
      name, message = payload.split("\n", 2)
      message ||= ''
      utf8 = message.dup.force_encoding(Encoding::UTF_8)
      message = utf8 if utf8.valid_encoding?
      klass = error_class(name)
      raise errno(klass, message.empty? ? nil : message) if klass <= SystemCallError
      raise klass, message
    end

    # strerror(3) as glibc words it (what MRI on Linux says); wasi-libc,
    # which the VM's own Errno messages come from, words some differently.
    STRERROR = {
      'ECONNREFUSED' => 'Connection refused',
      'ECONNRESET' => 'Connection reset by peer',
      'ECONNABORTED' => 'Software caused connection abort',
      'ETIMEDOUT' => 'Connection timed out',
      'EHOSTUNREACH' => 'No route to host',
      'ENETUNREACH' => 'Network is unreachable',
      'ENETDOWN' => 'Network is down',
      'EPIPE' => 'Broken pipe',
      'EADDRNOTAVAIL' => 'Cannot assign requested address',
      'EADDRINUSE' => 'Address already in use',
      'EACCES' => 'Permission denied',
      'EPERM' => 'Operation not permitted',
      'ENOENT' => 'No such file or directory',
    }.freeze

    # An Errno exception with MRI-on-Linux's message ("text - detail").
    def errno(klass, detail = nil)
      name = klass.name.to_s.delete_prefix('Errno::')
      text = STRERROR[name]
      e = klass.new
      return e unless text
      e.exception(detail ? "#{text} - #{detail}" : text)
    end

    def error_class(name)
      @errors[name] ||= begin
        k = Object.const_get(name)
        k.is_a?(Class) && k <= Exception ? k : RuntimeError
      rescue NameError
        RuntimeError
      end
    end

    # TLS settings of a Net::HTTP, as JSON for the bridge.
    def tls_params(http)
      mode = http.verify_mode
      verify = mode.nil? || mode != OpenSSL::SSL::VERIFY_NONE
      h = { 'verify' => verify, 'ca' => [], 'caFiles' => [] }
      store = http.cert_store
      h['defaultPaths'] = store.nil? || store.instance_variable_get(:@__nhw_default) ? true : false
      if store
        (store.instance_variable_get(:@__nhw_pems) || []).each { |pem| h['ca'] << pem }
        (store.instance_variable_get(:@__nhw_files) || []).each { |f| h['caFiles'] << f }
      end
      if (f = http.ca_file)
        add_ca_file(h, f)
      end
      if (dir = http.ca_path)
        begin
          Dir.children(dir).sort.each do |name|
            path = File.join(dir, name)
            h['ca'] << File.read(path) if File.file?(path)
          end
        rescue SystemCallError
          h['caFiles'] << dir
        end
      end
      h['verifyHostname'] = false if http.respond_to?(:verify_hostname) && http.verify_hostname == false
      h['cert'] = http.cert.to_pem if http.cert
      h['key'] = http.key.respond_to?(:private_to_pem) ? http.key.private_to_pem : http.key.to_pem if http.key
      h['minVersion'] = tls_version(http.min_version) if http.respond_to?(:min_version) && http.min_version
      h['maxVersion'] = tls_version(http.max_version) if http.respond_to?(:max_version) && http.max_version
      if http.respond_to?(:ssl_version) && http.ssl_version
        v = tls_version(http.ssl_version)
        h['minVersion'] = h['maxVersion'] = v if v
      end
      if http.ciphers
        h['ciphers'] = http.ciphers.is_a?(Array) ? http.ciphers.map { |c| c.is_a?(Array) ? c[0] : c }.join(':') : http.ciphers.to_s
      end
      JSON.generate(h)
    end

    def add_ca_file(h, f)
      if File.file?(f)
        h['ca'] << File.read(f)
      else
        h['caFiles'] << f.to_s # a path on the host (Node reads it)
      end
    rescue SystemCallError
      h['caFiles'] << f.to_s
    end

    def tls_version(v)
      case v.to_s.upcase.delete('_.V')
      when 'TLS1', 'TLS10' then 'TLSv1'
      when 'TLS11' then 'TLSv1.1'
      when 'TLS12' then 'TLSv1.2'
      when 'TLS13' then 'TLSv1.3'
      end
    end
  end

  # Records the certificates an OpenSSL::X509::Store is given, so that the
  # host's TLS can trust the same ones (a Store cannot list them).
  module StoreRecorder
    def add_file(path)
      if File.file?(path)
        (@__nhw_pems ||= []) << File.read(path)
        super
      else
        (@__nhw_files ||= []) << path.to_s # a path on the host
        self
      end
    end

    def add_cert(cert)
      (@__nhw_pems ||= []) << cert.to_pem
      super
    end

    def add_path(path)
      Dir.children(path).sort.each do |name|
        f = File.join(path, name)
        (@__nhw_pems ||= []) << File.read(f) if File.file?(f)
      end
      super
    rescue SystemCallError
      (@__nhw_files ||= []) << path.to_s
      self
    end

    def set_default_paths
      @__nhw_default = true
      super
    end
  end
  OpenSSL::X509::Store.prepend(StoreRecorder) if defined?(OpenSSL::X509::Store)

  # The IO under Net::BufferedIO: a host connection.
  class Socket
    attr_reader :id

    # Opens a connection; raises what MRI's Net::HTTP#connect raises.
    def self.open(host, port, open_timeout, tls)
      bridge = NetHttpWasm.bridge
      r = NetHttpWasm.await(bridge.call(:open, host.to_s, port.to_i, tls, NetHttpWasm.ms(open_timeout))).to_s
      unless r.start_with?('!')
        id, family, laddr, lport = r.split("\n")
        return new(bridge, id.to_i, family, laddr, lport.to_i)
      end
      kind, detail = r[1..].split("\n", 2)
      case kind
      when 'timeout'
        raise NetHttpWasm.errno(Errno::ETIMEDOUT, 'user specified timeout') if SOCKET_OPEN_TIMEOUT
        raise Net::OpenTimeout, 'execution expired'
      when 'ssltimeout'
        raise Net::OpenTimeout
      when 'errno'
        klass = Errno.const_defined?(detail) ? Errno.const_get(detail) : SystemCallError
        raise NetHttpWasm.errno(klass, %(connect(2) for #{host.to_s.dump} port #{port}))
      when 'resolve'
        text = detail == 'EAI_AGAIN' ? 'Temporary failure in name resolution' : 'Name or service not known'
        klass = defined?(::Socket::ResolutionError) ? ::Socket::ResolutionError : SocketError
        raise klass, "getaddrinfo(3): #{text}"
      when 'ssl'
        raise OpenSSL::SSL::SSLError, detail
      else
        NetHttpWasm.raise_payload("#{kind}\n#{detail}")
      end
    end

    def initialize(bridge, id, family, laddr, lport)
      @bridge = bridge
      @id = id
      @family = family
      @laddr = laddr
      @lport = lport
      @closed = false
      @rbuf = "\0".b * Net::BufferedIO::BUFSIZE
      @rbuf_addr = NetHttpWasm.addr(@rbuf)
    end

    def inspect
      return '#<TCPSocket:(closed)>' if @closed
      "#<TCPSocket:fd #{@id + 4}, #{@family}, #{@laddr}, #{@lport}>"
    end

    def to_io
      self
    end

    def closed?
      @closed
    end

    def close
      return nil if @closed
      @closed = true
      @bridge.call(:close, @id)
      nil
    end

    def setsockopt(*)
      0
    end

    def read_nonblock(maxlen, buf = nil, exception: true)
      raise IOError, 'closed stream' if @closed
      n = @bridge.call(:readNow, @id, @rbuf_addr, maxlen < @rbuf.bytesize ? maxlen : @rbuf.bytesize).to_i
      if n >= 0
        s = @rbuf.unpack1(UNPACK[n] ||= "a#{n}") # a copy (see #next_record)
        return buf ? buf.replace(s) : s
      end
      case n
      when RC_WOULD_BLOCK
        raise IO::EAGAINWaitReadable, 'Resource temporarily unavailable - read would block' if exception
        :wait_readable
      when RC_EOF
        raise EOFError, 'end of file reached' if exception
        nil
      else
        NetHttpWasm.raise_last_error
      end
    end

    def write_nonblock(str, exception: true)
      raise IOError, 'closed stream' if @closed
      str = str.to_s
      n = @bridge.call(:write, @id, NetHttpWasm.addr(str), str.bytesize).to_i
      NetHttpWasm.raise_last_error if n < 0
      n
    end

    def write(*strs)
      strs.sum { |s| write_nonblock(s) }
    end

    # 1: data waiting, 2: end of stream (or error), 0: nothing yet.
    def state
      @closed ? 2 : @bridge.call(:state, @id).to_i
    end

    def wait_readable(timeout = nil)
      raise IOError, 'closed stream' if @closed
      return (state != 0 ? self : nil) if timeout && timeout <= 0
      NetHttpWasm.await(@bridge.call(:wait, @id, NetHttpWasm.ms(timeout))).to_i == 1 ? self : nil
    end

    def wait_writable(_timeout = nil)
      self
    end

    def eof?
      raise IOError, 'closed stream' if @closed
      s = state
      s = state if s == 0 && wait_readable
      s == 2
    end
  end

  # Net::BufferedIO over a NetHttpWasm::Socket, plus the codec's message I/O.
  class BufferedIO < Net::BufferedIO
    def initialize(io, **kw)
      super
      @bridge = NetHttpWasm.bridge
      @id = io.id
      @buf = "\0".b * BUF_MIN
      @buf_addr = NetHttpWasm.addr(@buf)
      @grow = false
      @rec_pos = 0
      @rec_end = 0
      @codec_msg = false
    end

    # Whether this request can go through the codec.
    def codec_ready?
      NetHttpWasm.codec? && @debug_output.nil? && @rbuf_offset == @rbuf.bytesize && !@io.closed?
    end

    # The message being read came from the codec.
    def codec_msg?
      @codec_msg
    end

    # net/http's own code writes (and so reads) this message.
    def raw_msg!
      @codec_msg = false
    end

    # Writes a request serialized by the codec (hdr: see js/ruby.mjs#send).
    def codec_send(hdr, body)
      @rec_pos = @rec_end = 0
      rc = if body
        @bridge.call(:send, @id, NetHttpWasm.addr(hdr), hdr.bytesize, NetHttpWasm.addr(body), body.bytesize)
      else
        @bridge.call(:send, @id, NetHttpWasm.addr(hdr), hdr.bytesize, 0, 0)
      end
      rc = rc.to_i
      NetHttpWasm.raise_last_error if rc < 0
      @codec_msg = true
      @fresh = rc == 0 # nothing can have arrived yet: the first read waits
      nil
    end

    # Net::HTTPResponse.read_new, from the codec's records.
    def codec_read_head
      while true
        type, payload = next_record
        case type
        when R_HEAD
          # (a message without a body ends with its head: its end record
          # stays queued and is dropped by the next codec_send)
          return build_response(payload)
        when R_ERROR
          @codec_msg = false
          NetHttpWasm.raise_payload(payload)
        end
      end
    end

    # Net::HTTPResponse#read_body_0, from the codec's records.
    def codec_read_body(dest, res)
      while true
        type, payload = next_record
        case type
        when R_BODY
          dest << payload
        when R_END
          @codec_msg = false
          res.instance_variable_set(:@header, fields(payload.split("\n", -1), 0)) unless payload.empty?
          return
        when R_ERROR
          @codec_msg = false
          NetHttpWasm.raise_payload(payload)
        end
      end
    end

    private

    def next_record
      fill_records if @rec_pos >= @rec_end
      type, len = @buf.unpack('CV', offset: @rec_pos)
      # a copy: a byteslice would share the buffer that JS writes into
      payload = @buf.unpack1("a#{len}", offset: @rec_pos + 5)
      @rec_pos += 5 + len
      [type, payload]
    end

    def fill_records
      if @grow
        @grow = false
        @buf = "\0".b * (@buf.bytesize * 2)
        @buf_addr = NetHttpWasm.addr(@buf)
      end
      while true
        n = if @fresh
          RC_WOULD_BLOCK # nothing can have arrived yet: wait
        else
          @bridge.call(:recvNow, @id, @buf_addr, @buf.bytesize).to_i
        end
        @fresh = false
        if n == RC_WOULD_BLOCK
          n = NetHttpWasm.await(@bridge.call(:recv, @id, @buf_addr, @buf.bytesize, NetHttpWasm.ms(@read_timeout))).to_i
        end
        if n > 0
          @rec_pos = 0
          @rec_end = n
          @grow = true if n > @buf.bytesize - 4096 && @buf.bytesize < BUF_MAX
          return
        end
        if n <= -NEED_BASE
          @buf = "\0".b * [-n - NEED_BASE, @buf.bytesize * 2].max
          @buf_addr = NetHttpWasm.addr(@buf)
          next
        end
        @codec_msg = false
        raise Net::ReadTimeout.new(@io) if n == RC_TIMEOUT
        NetHttpWasm.raise_last_error
      end
    end

    def build_response(payload)
      a = payload.split("\n", -1)
      flags = a[3].to_i
      code = a[2]
      klass = Net::HTTPResponse.__send__(:response_class, code)
      res = klass.new(flags & 1 == 0 ? nil : a[1], code, flags & 2 == 0 ? nil : a[4])
      res.instance_variable_set(:@header, fields(a, 5))
      inflate = flags & 12
      res.instance_variable_set(:@__nhw_inflate, inflate) if inflate != 0
      res
    end

    # count \n extras \n names... \n first values... \n (index \n value)...
    # from a[i] on (see writeBlockFields in js/ruby.mjs) → the @header hash
    def fields(a, i)
      n = a[i].to_i
      x = a[i + 1].to_i
      h = {}
      k = i + 2
      e = k + n
      while k < e
        h[a[k]] = [a[k + n]]
        k += 1
      end
      if x > 0
        j = i + 2 + 2 * n
        e = j + 2 * x
        while j < e
          h[a[i + 2 + a[j].to_i]] << a[j + 1]
          j += 2
        end
      end
      h
    end
  end

  # Net::HTTP#connect: the host opens the connection.
  module HTTPConnect
    private

    def connect
      if use_ssl?
        @ssl_context = OpenSSL::SSL::SSLContext.new if defined?(OpenSSL::SSL::SSLContext)
      end
      if proxy?
        conn_addr = proxy_address
        conn_port = proxy_port
        if use_ssl?
          raise NotImplementedError, 'net-http-wasm: HTTPS through a proxy (CONNECT) is not supported'
        end
      else
        conn_addr = conn_address
        conn_port = port
      end

      __nhw_debug "opening connection to #{conn_addr}:#{conn_port}..."
      tls = use_ssl? ? NetHttpWasm.tls_params(self) : nil
      if SOCKET_OPEN_TIMEOUT
        begin
          s = NetHttpWasm::Socket.open(conn_addr, conn_port, @open_timeout, tls)
        rescue OpenSSL::SSL::SSLError, Net::OpenTimeout
          raise
        rescue => e
          if (defined?(IO::TimeoutError) && e.is_a?(IO::TimeoutError)) || e.is_a?(Errno::ETIMEDOUT)
            e = Net::OpenTimeout.new(e)
          end
          raise e, "Failed to open TCP connection to " +
            "#{conn_addr}:#{conn_port} (#{e.message})"
        end
      else
        begin
          s = NetHttpWasm::Socket.open(conn_addr, conn_port, @open_timeout, tls)
        rescue OpenSSL::SSL::SSLError, Net::OpenTimeout
          raise
        rescue => e
          raise e, "Failed to open TCP connection to " +
            "#{conn_addr}:#{conn_port} (#{e.message})"
        end
      end
      __nhw_debug "opened"
      @socket = NetHttpWasm::BufferedIO.new(s, read_timeout: @read_timeout,
                                            write_timeout: @write_timeout,
                                            continue_timeout: @continue_timeout,
                                            debug_output: @debug_output)
      @last_communicated = nil
      on_connect
    rescue => exception
      if s
        __nhw_debug "Conn close because of connect error #{exception}"
        s.close
      end
      raise
    end

    def __nhw_debug(msg)
      return unless @debug_output
      @debug_output << msg
      @debug_output << "\n"
    end
  end
  Net::HTTP.prepend(HTTPConnect)

  # Net::HTTPGenericRequest#exec: the codec writes the request.
  module RequestExec
    def exec(sock, ver, path)
      if NetHttpWasm::BufferedIO === sock && sock.codec_ready? && (hdr = __nhw_serialize(sock, ver, path))
        sock.codec_send(hdr, @body)
      else
        sock.raw_msg! if NetHttpWasm::BufferedIO === sock
        super
      end
    end

    private

    # "METHOD\npath\nversion\nflags\n" + "name\ncount\nvalue\n..." per field,
    # or nil where net/http's own code must write the request (a body stream
    # or multipart body data, Expect: 100-continue, or what the line framing
    # or the codec's UTF-8 text cannot carry exactly).
    def __nhw_serialize(sock, ver, path)
      return nil if @body_stream || @body_data
      body = @body
      if body
        return nil unless String === body
        return nil if sock.continue_timeout && @header['expect']
      end
      m = @method
      return nil if m.include?("\n") || path.include?("\n") || m.match?(/[a-z]/)
      if body
        # what send_request_with_body does to the request before writing it
        self.content_length = body.bytesize
        delete 'Transfer-Encoding'
        supply_default_content_type if DEFAULT_CONTENT_TYPE
      end
      flags = (body ? 1 : 0) | (response_body_permitted? ? 2 : 0) | (@decode_content ? 4 : 0)
      flat = @header.flatten(2)
      if flat.size == @header.size * 2
        # one value per field (the usual case): name, value pairs, joined in C
        flat.unshift(m, path, ver, (flags | 8).to_s)
        hdr = flat.join("\n")
        lines = flat.size - 1
      else
        hdr = String.new(capacity: 512)
        hdr << m << "\n" << path << "\n" << ver << "\n" << flags.to_s << "\n"
        lines = 4
        @header.each do |k, vs|
          hdr << k << "\n" << vs.size.to_s << "\n"
          vs.each { |v| hdr << v << "\n" }
          lines += 2 + vs.size
        end
      end
      # a "\n" inside a value (set behind net/http's checks) breaks the framing
      return nil unless hdr.count("\n") == lines
      unless hdr.ascii_only?
        # the codec reads UTF-8 text; header names from Ruby must be ASCII
        # (String#capitalize depends on their encoding)
        return nil unless @header.each_key.all?(&:ascii_only?)
        return nil unless hdr.force_encoding(Encoding::UTF_8).valid_encoding?
      end
      hdr
    rescue Encoding::CompatibilityError
      nil
    end
  end
  Net::HTTPGenericRequest.prepend(RequestExec)

  # Net::HTTPResponse.read_new: the codec's parser read the head.
  module ResponseReadNew
    def read_new(sock)
      if NetHttpWasm::BufferedIO === sock && sock.codec_msg?
        sock.codec_read_head
      else
        super
      end
    end
  end
  Net::HTTPResponse.singleton_class.prepend(ResponseReadNew)

  # Net::HTTPResponse#read_body_0: the codec's parser reads the body.
  module ResponseReadBody
    private

    def read_body_0(dest)
      sock = @socket
      return super unless NetHttpWasm::BufferedIO === sock && sock.codec_msg?
      # as Net::HTTPResponse#inflater before the body is read (the codec
      # told what it does: @__nhw_inflate, from the head's fields)
      case @__nhw_inflate
      when 4
        delete 'content-encoding'
        # Inflater#inflate_adapter makes the destination binary
        if dest.respond_to?(:set_encoding)
          dest.set_encoding(Encoding::ASCII_8BIT)
        elsif dest.respond_to?(:force_encoding)
          dest.force_encoding(Encoding::ASCII_8BIT)
        end
      when 8
        delete 'content-encoding'
      end
      sock.codec_read_body(dest, self)
    end
  end
  Net::HTTPResponse.prepend(ResponseReadBody)
end
