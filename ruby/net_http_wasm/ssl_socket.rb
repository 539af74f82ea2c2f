# frozen_string_literal: true
#
# OpenSSL::SSL::SSLSocket over the host's TLS: the handshake is the host's
# (node:tls over the same connection, as Net::HTTP's HTTPS through a proxy
# starts it), with the SSLContext's settings; then the socket reads and
# writes the connection's plain bytes through its TCPSocket.

module OpenSSL
  module SSL
    OP_ALL = 0x80000850 unless const_defined?(:OP_ALL)
    OP_NO_COMPRESSION = 0x20000 unless const_defined?(:OP_NO_COMPRESSION)
    OP_DONT_INSERT_EMPTY_FRAGMENTS = 0x800 unless const_defined?(:OP_DONT_INSERT_EMPTY_FRAGMENTS)
    OP_NO_SSLv2 = 0 unless const_defined?(:OP_NO_SSLv2)
    OP_NO_SSLv3 = 0x2000000 unless const_defined?(:OP_NO_SSLv3)
    OP_NO_TLSv1 = 0x4000000 unless const_defined?(:OP_NO_TLSv1)
    OP_NO_TLSv1_1 = 0x10000000 unless const_defined?(:OP_NO_TLSv1_1)
    OP_NO_TICKET = 0x4000 unless const_defined?(:OP_NO_TICKET)
    SSL2_VERSION = 0x0002 unless const_defined?(:SSL2_VERSION)
    SSL3_VERSION = 0x0300 unless const_defined?(:SSL3_VERSION)

    class SSLErrorWaitReadable < SSLError
      include IO::WaitReadable
    end

    class SSLErrorWaitWritable < SSLError
      include IO::WaitWritable
    end

    class SSLContext
      # (held, not used: the host's TLS has its own; client_ca and the
      # session callbacks are a server's, which the host does not run)
      attr_accessor :options, :security_level, :servername_cb, :alpn_protocols, :session_id_context,
                    :renegotiation_cb, :tmp_dh_callback, :client_cert_cb, :client_ca, :alpn_select_cb,
                    :npn_protocols, :npn_select_cb, :session_get_cb, :session_new_cb, :session_remove_cb,
                    :session_cache_size

      def session_cache_mode
        @session_cache_mode || 2
      end

      def setup
        true
      end

      def freeze
        self
      end
    end

    # Whether hostname names the certificate (its subjectAltName's DNS and
    # IP entries, else its common name), as OpenSSL::SSL.verify_certificate_identity.
    def self.__nhw_identity?(cert, hostname)
      host = hostname.to_s.downcase.delete_prefix('[').delete_suffix(']')
      san = cert.extensions.find { |e| e.oid == 'subjectAltName' }
      if san
        return san.value.split(/,\s*/).any? do |entry|
          kind, value = entry.split(':', 2)
          case kind
          when 'DNS' then __nhw_name_match?(value.to_s.downcase, host)
          when 'IP Address' then value.to_s.downcase == host
          else false
          end
        end
      end
      cn = cert.subject.to_a.find { |name, _, _| name == 'CN' }
      cn ? __nhw_name_match?(cn[1].downcase, host) : false
    end

    def self.__nhw_name_match?(pattern, host)
      return pattern == host unless pattern.start_with?('*.')
      rest = pattern[2..]
      i = host.index('.')
      i && i > 0 && host[(i + 1)..] == rest
    end

    verify = :verify_certificate_identity
    define_singleton_method(verify) { |cert, hostname| __nhw_identity?(cert, hostname) } unless respond_to?(verify)

    # A TLS server over a TCPServer: each accepted connection's handshake is
    # the host's (SSLSocket#accept).
    class SSLServer
      attr_accessor :start_immediately

      def initialize(svr, ctx)
        @svr = svr
        @ctx = ctx
        @start_immediately = true
      end

      def to_io
        @svr
      end

      def listen(backlog = ::Socket::SOMAXCONN)
        @svr.listen(backlog)
      end

      def shutdown(how = ::Socket::SHUT_RDWR)
        @svr.shutdown(how)
      end

      def accept
        sock = @svr.accept
        begin
          ssl = SSLSocket.new(sock, @ctx)
          ssl.sync_close = true
          ssl.accept if @start_immediately
          ssl
        rescue Exception # rubocop:disable Lint/RescueException
          sock.close
          raise
        end
      end

      def close
        @svr.close
      end

      %i[addr peeraddr closed? setsockopt getsockopt fcntl fileno do_not_reverse_lookup=].each do |m|
        define_method(m) { |*a| @svr.__send__(m, *a) }
      end
    end unless const_defined?(:SSLServer, false)

    unless const_defined?(:Session, false)
      # OpenSSL::SSL::Session over the host's TLS: the DER the host gives
      # (i2d_SSL_SESSION's, which MRI's Session reads too), and the fields
      # of it that Ruby reads (ssl/ssl_asn1.c: time [1], timeout [2]).
      class Session
        class SessionError < OpenSSL::OpenSSLError; end

        PEM = /-----BEGIN SSL SESSION PARAMETERS-----(.*?)-----END SSL SESSION PARAMETERS-----/m

        attr_reader :id, :timeout

        # From a session's DER or PEM, or an SSLSocket (its session).
        def initialize(source)
          source = source.session&.to_der.to_s if source.is_a?(SSLSocket)
          der = source.to_str.b
          der = Regexp.last_match(1).unpack1('m') if der =~ PEM
          fields = begin
            OpenSSL::ASN1.decode(der).value
          rescue OpenSSL::ASN1::ASN1Error, NoMethodError
            nil
          end
          raise ArgumentError, 'unknown type' unless fields.is_a?(Array) && fields[3].is_a?(OpenSSL::ASN1::OctetString)

          @der = der
          @id = fields[3].value
          field = ->(tag) { f = fields.find { |x| x.tag_class == :CONTEXT_SPECIFIC && x.tag == tag } and f.value[0].value.to_i }
          @time = Time.at(field.(1) || 0)
          @timeout = field.(2) || 0
        end

        def time
          @time.dup
        end

        def time=(t)
          @time = t.is_a?(Time) ? t.dup : Time.at(Integer(t))
        end

        def timeout=(seconds)
          @timeout = Integer(seconds)
        end

        def to_der
          @der.dup
        end

        def to_pem
          "-----BEGIN SSL SESSION PARAMETERS-----\n#{[@der].pack('m0').scan(/.{1,64}/).join("\n")}\n-----END SSL SESSION PARAMETERS-----\n"
        end

        def ==(other)
          other.is_a?(Session) && other.to_der == @der
        end
      end
    end

    class SSLSocket
      attr_reader :io, :context, :hostname
      attr_accessor :sync_close, :sync
      alias to_io io

      def initialize(io, context = nil)
        context ||= SSLContext.new
        raise TypeError, "wrong argument type #{io.class} (expected BasicSocket)" unless io.is_a?(::BasicSocket)
        @io = io
        @context = context
        @sync_close = false
        @sync = true
        @hostname = nil
        @connected = false
        @session = nil
      end

      def hostname=(name)
        raise ArgumentError, 'hostname= after connect' if @connected
        @hostname = name
      end

      # The handshake, verified as the context says (verify_mode,
      # verify_hostname with hostname=, ca_file, cert_store...).
      def connect
        return self if @connected
        sock = @io.__nhw_socket
        raise IOError, 'closed stream' if sock.nil? || sock.closed?
        host, port = @io.instance_variable_get(:@__nhw_peer)
        begin
          sock.start_tls(tls_json, @context.timeout)
        rescue SSLError => e
          # OpenSSL checked the name given by hostname= in the handshake
          raise unless e.message.start_with?('hostname "') && e.message.end_with?('" does not match the server certificate')
          ip = NetHttpWasm.getaddress(host)
          raise SSLError, "SSL_connect returned=1 errno=0 peeraddr=#{ip.include?(':') ? "[#{ip}]" : ip}:#{port} " \
            'state=error: certificate verify failed (hostname mismatch)'
        end
        @connected = true
        check_callback if @context.verify_callback
        self
      end

      def connect_nonblock(exception: true)
        connect
      end

      # The server's side of the handshake (an accepted connection, the
      # context's cert and key), done by the host.
      def accept
        return self if @connected
        sock = @io.__nhw_socket
        raise IOError, 'closed stream' if sock.nil? || sock.closed?
        raise SSLError, 'SSL_accept: no certificate or key in the context (cert=, key=)' unless @context.cert && @context.key
        sock.start_tls(server_json, @context.timeout)
        @connected = true
        self
      end

      def accept_nonblock(exception: true)
        accept
      end

      def peer_cert
        @connected ? @io.__nhw_socket.peer_cert : nil
      end

      def peer_cert_chain
        return nil unless @connected
        info = @io.__nhw_socket.peer_verify_info
        info ? info[1] : [peer_cert].compact
      end

      def cert
        @context.cert
      end

      def post_connection_check(hostname)
        return true if OpenSSL::SSL.verify_certificate_identity(peer_cert, hostname)
        raise SSLError, "hostname \"#{hostname}\" does not match the server certificate"
      end

      def session_reused?
        @connected && @io.__nhw_socket.session_reused?
      end

      # The TLS session the host last received on this connection (nil
      # before the handshake: then the one given to resume, if any).
      def session
        return @session unless @connected
        s = @io.__nhw_socket.session
        s.timeout = @context.timeout if s && @context.timeout # (the context's session timeout)
        s
      end

      # A session to resume in the handshake (connect).
      def session=(session)
        raise TypeError, "wrong argument type #{session.class} (expected OpenSSL/SSL/Session)" unless session.is_a?(Session)
        @session = session
      end

      def verify_result
        OpenSSL::X509::V_OK
      end

      def state
        @connected ? 'SSLOK ' : 'before SSL initialization'
      end

      def pending
        0
      end

      def alpn_protocol
        nil
      end

      def close
        # (the TLS connection is the host's over the socket: it ends with it, sync_close or not)
        @io.close unless @io.closed?
        nil
      end

      def closed?
        @io.closed?
      end

      def sysclose
        close
      end

      def read_nonblock(maxlen, buf = nil, exception: true)
        r = @io.read_nonblock(maxlen, buf, exception: false)
        return r unless exception
        raise SSLErrorWaitReadable, 'read would block' if r == :wait_readable
        raise EOFError, 'end of file reached' if r.nil?
        r
      end

      def write_nonblock(str, exception: true)
        r = @io.write_nonblock(str, exception: false)
        raise SSLErrorWaitWritable, 'write would block' if r == :wait_writable && exception
        r
      end

      def sysread(maxlen, buf = nil)
        @io.readpartial(maxlen, buf)
      end

      def syswrite(str)
        @io.write(str)
      end

      def sysread_nonblock(*a, **k)
        read_nonblock(*a, **k)
      end

      def syswrite_nonblock(*a, **k)
        write_nonblock(*a, **k)
      end

      %i[read readpartial gets readline each_line each readlines getc getbyte readchar readbyte each_byte
         ungetc eof? eof write << print puts printf wait_readable wait_writable wait flush
         peeraddr addr local_address remote_address setsockopt getsockopt fileno to_i timeout timeout=].each do |m|
        define_method(m) do |*a, **k, &b|
          r = k.empty? ? @io.__send__(m, *a, &b) : @io.__send__(m, *a, **k, &b)
          r.equal?(@io) ? self : r
        end
      end

      def inspect
        "#<#{self.class}:#{@io.inspect}>"
      end

      private

      # The context's settings as NetHttpWasm.tls_params reads them from a Net::HTTP.
      Settings = Struct.new(:verify_mode, :cert_store, :ca_file, :ca_path, :address, :verify_callback,
                            :verify_hostname, :cert, :key, :min_version, :max_version, :ssl_version, :ciphers)

      def tls_json
        c = @context
        host = @hostname || @io.__nhw_socket.instance_variable_get(:@peer_host)
        s = Settings.new(c.verify_mode || VERIFY_NONE, c.cert_store, c.ca_file, c.ca_path, host, c.verify_callback,
                         c.verify_hostname && @hostname ? true : false, c.cert, c.key, c.min_version, c.max_version,
                         c.ssl_version, c.ciphers)
        h = JSON.parse(NetHttpWasm.tls_params(s, @session))
        h['verifyHostname'] = false unless s.verify_hostname
        JSON.generate(h)
      end

      # The context's settings for a server's handshake: its own certificate
      # and key; with VERIFY_PEER the client's certificate is asked for and
      # checked against ca_file / cert_store.
      def server_json
        c = @context
        mode = c.verify_mode.to_i
        s = Settings.new(mode & VERIFY_PEER != 0 ? VERIFY_PEER : VERIFY_NONE, c.cert_store, c.ca_file, c.ca_path, nil, nil,
                         false, c.cert, c.key, c.min_version, c.max_version, c.ssl_version, c.ciphers)
        h = JSON.parse(NetHttpWasm.tls_params(s))
        h.delete('servername')
        h['server'] = true
        h['defaultPaths'] = false unless c.cert_store
        h['failIfNoPeerCert'] = true if mode & VERIFY_PEER != 0 && mode & VERIFY_FAIL_IF_NO_PEER_CERT != 0
        JSON.generate(h)
      end

      def check_callback
        http = Settings.new(@context.verify_mode || VERIFY_NONE, nil, nil, nil, @hostname.to_s, @context.verify_callback,
                            @context.verify_hostname && @hostname ? true : false)
        NetHttpWasm.verify_peer(http, @io.__nhw_socket)
      rescue StandardError
        @io.close
        raise
      end
    end
  end
end
