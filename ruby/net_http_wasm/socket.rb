# frozen_string_literal: true

module NetHttpWasm
  # The IO under Net::BufferedIO: a host connection.
  class Socket
    attr_reader :id

    # Opens a connection (from local_host:local_port when given, as
    # TCPSocket.open's third and fourth arguments); raises what MRI's
    # Net::HTTP#connect raises. upgrade: TLS will start over it (start_tls).
    def self.open(host, port, open_timeout, tls, local_host = nil, local_port = nil, upgrade: false)
      # as TCPSocket.open: a host that is not a String is converted with to_str
      host = host.to_str unless host.nil? || String === host
      NetHttpWasm.c_str(host)
      NetHttpWasm.c_str(local_host)
      bridge = NetHttpWasm.bridge
      # ('' for none: a nil argument is made a JS value by Ruby code of the js gem's)
      local = local_host || local_port ? Lines::Local.new(local_host.to_s, local_port.to_i).to_s : ''
      r = NetHttpWasm.call_wait_or_now('open', host.to_s, port.to_i, tls || '', NetHttpWasm.ms(open_timeout), local, upgrade).to_s
      raise_open_error(Lines::Failure.read(r[1..]), host, port) if r.start_with?('!')
      o = Lines::Open.read(r)
      s = new(bridge, o.id, o.family, o.address, o.port, host, port)
      s.tls_established(o.reused, o.cert, o.check) if tls
      s
    end

    # Raises what MRI raises for a failed connect or TLS handshake, from the
    # bridge's failure (Lines::Failure).
    def self.raise_open_error(failure, host, port)
      kind = failure.kind
      detail = failure.detail.to_s
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
        NetHttpWasm.raise_failure(failure)
      end
    end

    # TLS over this connection (HTTPS through a proxy, after CONNECT): the
    # handshake as SSLSocket#connect does it, timed by open_timeout.
    def start_tls(tls, open_timeout)
      raise IOError, 'closed stream' if @closed
      r = NetHttpWasm.call_wait('starttls', @id, tls, NetHttpWasm.ms(open_timeout)).to_s
      if r.start_with?('!')
        @closed = true
        Socket.raise_open_error(Lines::Failure.read(r[1..]), @peer_host, @peer_port)
      end
      u = Lines::Upgraded.read(r)
      tls_established(u.reused, u.cert, u.check)
      self
    end

    # What the host's handshake reported: whether the session was resumed,
    # the server's certificate (DER in base64), and when asked for (a
    # verify_callback) the peer's chain (Lines::PeerCheck).
    def tls_established(reused, der, check = nil)
      @session_reused = reused ? true : false
      @peer_der = der
      @peer_cert = nil
      @peer_check = check
    end

    # For NetHttpWasm.verify_peer: [the address connected to, "ip:port";
    # the peer's chain, leaf first, as certificates; whether the leaf
    # matches the host name; trusted PEMs].
    def peer_verify_info
      c = @peer_check or return nil
      [c.peer, c.chain.to_s.split(',').map { |b| OpenSSL::X509::Certificate.new(b.unpack1('m')) }, c.name_ok ? true : false, c.trusted.to_s]
    end

    # OpenSSL::SSL::SSLSocket#peer_cert: the server's certificate (nil on a
    # plain connection).
    def peer_cert
      return nil if @peer_der.nil? || @peer_der.empty?
      @peer_cert ||= OpenSSL::X509::Certificate.new(@peer_der.unpack1('m'))
    end

    # OpenSSL::SSL::SSLSocket#session_reused?: whether the host resumed the session it was given
    def session_reused?
      @session_reused ? true : false
    end

    def initialize(bridge, id, family, laddr, lport, host, port)
      @bridge = bridge
      @peer_host = host
      @peer_port = port
      @id = id
      @family = family
      @laddr = laddr
      @lport = lport
      @closed = false
      @rbuf = nil # read_nonblock's buffer, made on first use (the codec needs none)
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
      if @on_session && (s = session)
        @on_session.call(s)
      end
      @closed = true
      @bridge.call('close', @id)
      nil
    end

    # OpenSSL::SSL::SSLSocket#session: the TLS session the host last
    # received on this connection, to resume (nil if none).
    def session
      return nil if @closed
      der = @bridge.call('session', @id).to_s
      der.empty? ? nil : OpenSSL::SSL::Session.new(der.unpack1('m'))
    end

    # Called with the connection's TLS session as it closes (Net::HTTP
    # keeps it to resume, as its session_new_cb does with MRI's).
    attr_writer :on_session

    def setsockopt(*)
      0
    end

    def read_nonblock(maxlen, buf = nil, exception: true)
      raise IOError, 'closed stream' if @closed
      unless @rbuf
        @rbuf = "\0".b * Net::BufferedIO::BUFSIZE
        @rbuf_addr = NetHttpWasm.addr(@rbuf)
      end
      n = @bridge.call('readNow', @id, @rbuf_addr, maxlen < @rbuf.bytesize ? maxlen : @rbuf.bytesize).to_i
      if n >= 0
        s = NetHttpWasm.copy_out(@rbuf, 0, n)
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

    # What fits in the host's send buffer (see Bridge#write); none:
    # :wait_writable, as a socket whose kernel buffer is full.
    def write_nonblock(str, exception: true)
      raise IOError, 'closed stream' if @closed
      str = str.to_s
      n = @bridge.call('write', @id, NetHttpWasm.addr(str), str.bytesize).to_i
      if n == RC_WOULD_BLOCK
        raise IO::EAGAINWaitWritable, 'Resource temporarily unavailable - write would block' if exception
        return :wait_writable
      end
      NetHttpWasm.raise_last_error if n < 0
      n
    end

    def write(*strs)
      strs.sum { |s| write_nonblock(s) }
    end

    # 1: data waiting, 2: end of stream (or error), 0: nothing yet.
    def state
      @closed ? 2 : @bridge.call('state', @id).to_i
    end

    def wait_readable(timeout = nil)
      raise IOError, 'closed stream' if @closed
      if timeout && timeout <= 0
        r = @bridge.call('settle', @id).to_i
        # the host may not have looked at the socket while Ruby was busy
        r = NetHttpWasm.await(@bridge.call('settleLater', @id)).to_i if r == S_UNSETTLED
        return r != S_EMPTY ? self : nil
      end
      NetHttpWasm.call_wait('wait', @id, NetHttpWasm.ms(timeout)).to_i == 1 ? self : nil
    end

    # Waits for room in the host's send buffer (Bridge#drain): self, or nil
    # when timeout seconds passed with nothing sent.
    def wait_writable(timeout = nil)
      raise IOError, 'closed stream' if @closed
      NetHttpWasm.call_wait('drain', @id, NetHttpWasm.ms(timeout)).to_i == 1 ? self : nil
    end

    def eof?
      raise IOError, 'closed stream' if @closed
      s = state
      s = state if s == 0 && wait_readable
      s == 2
    end
  end
end
