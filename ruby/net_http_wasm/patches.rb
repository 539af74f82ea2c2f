# frozen_string_literal: true
#
# Net/http's own code, patched at exactly three seams (and Net::HTTP#connect,
# Net::HTTP.start's search for its options' writers, and three steps of every
# request that make calls dear in ruby.wasm: DearCalls below).

module NetHttpWasm
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
      else
        conn_addr = conn_address
        conn_port = port
      end

      __nhw_debug "opening connection to #{conn_addr}:#{conn_port}..."
      # through a proxy, TLS starts after CONNECT, over the same connection
      tunnel = use_ssl? && proxy?
      tls = use_ssl? && !proxy? ? NetHttpWasm.tls_params(self, __nhw_session) : nil
      if SOCKET_OPEN_TIMEOUT
        begin
          s = NetHttpWasm::Socket.open(conn_addr, conn_port, @open_timeout, tls, local_host, local_port, upgrade: tunnel)
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
          s = NetHttpWasm::Socket.open(conn_addr, conn_port, @open_timeout, tls, local_host, local_port, upgrade: tunnel)
        rescue OpenSSL::SSL::SSLError, Net::OpenTimeout
          raise
        rescue => e
          raise e, "Failed to open TCP connection to " +
            "#{conn_addr}:#{conn_port} (#{e.message})"
        end
      end
      __nhw_connect_tunnel(s) if tunnel
      NetHttpWasm.verify_peer(self, s) if use_ssl? && verify_callback
      # (ssl_timeout: the context's session timeout, which MRI's sessions take)
      s.on_session = proc { |sess| sess.timeout = @ssl_timeout if @ssl_timeout; @ssl_session = sess } if use_ssl?
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

    # As Net::HTTP#connect does for HTTPS through a proxy: TLS to the proxy
    # when proxy_use_ssl (unverified, as an SSLSocket without a context),
    # CONNECT, the proxy's answer read by net/http (#value raises on
    # anything but 2xx), then TLS to the server over the tunnel.
    def __nhw_connect_tunnel(s)
      if @proxy_use_ssl
        s.start_tls(JSON.generate('verify' => false, 'ca' => [], 'caFiles' => [],
                                  'defaultPaths' => false, 'servername' => proxy_address.to_s), @open_timeout)
      end
      proxy_sock = Net::BufferedIO.new(s, read_timeout: @read_timeout,
                                       write_timeout: @write_timeout,
                                       continue_timeout: @continue_timeout,
                                       debug_output: @debug_output)
      buf = +"CONNECT #{conn_address}:#{@port} HTTP/#{Net::HTTP::HTTPVersion}\r\n" \
        "Host: #{@address}:#{@port}\r\n"
      if proxy_user
        credential = ["#{proxy_user}:#{proxy_pass}"].pack('m0')
        buf << "Proxy-Authorization: Basic #{credential}\r\n"
      end
      buf << "\r\n"
      proxy_sock.write(buf)
      Net::HTTPResponse.read_new(proxy_sock).value
      # assuming nothing left in buffers after successful CONNECT response
      __nhw_debug "starting SSL for #{proxy_address}:#{proxy_port}..."
      s.start_tls(NetHttpWasm.tls_params(self, __nhw_session), @open_timeout)
    end

    # The TLS session to resume, as MRI's connect chooses it: the one the
    # last connection received (its session_new_cb), while its timeout lasts.
    def __nhw_session
      @ssl_session if @ssl_session &&
                      Process.clock_gettime(Process::CLOCK_REALTIME) < @ssl_session.time.to_f + @ssl_session.timeout
    end

    def __nhw_debug(msg)
      return unless @debug_output
      @debug_output << msg
      @debug_output << "\n"
    end
  end
  # Net::HTTP's own #connect is replaced (not wrapped by a prepended
  # module), so that a patch made later with alias_method wraps this one.
  HTTPConnect.private_instance_methods(false).each do |m|
    Net::HTTP.send(:define_method, m, HTTPConnect.instance_method(m))
    Net::HTTP.send(:private, m)
  end

  # Net::HTTP.start(address, ..., opt): each option is set through the
  # writer of its name. Net/http finds them by matching every method of the
  # new Net::HTTP (about 150) against /\A(\w+)=\z/ and looking each name
  # up in opt: in ruby.wasm, a large part of a one-off Net::HTTP.get's own
  # time.
  # Here the writers are named from opt's Symbol keys and taken from
  # http.methods in its order (Array#&): the same writers, called in the
  # same order with the same values; the rest as net/http's start does it.
  # http.methods alone is ~40 µs in ruby.wasm (a list of every method):
  # where at most one of the names is a public or protected method of the
  # new Net::HTTP's class (and the object has no singleton methods), as
  # for Net::HTTP.get's `use_ssl: false`, order cannot matter and the
  # class answers without it.
  # A last argument that is not a Hash (one with #to_hash) goes to
  # net/http's own. Replaced, as #connect, so that a later alias_method
  # wraps this one.
  module HTTPStart
    WRITER = /\A\w+\z/
    NET_HTTP_START = Net::HTTP.singleton_class.instance_method(:start)

    def start(address, *arg, &block)
      opt = arg.last
      return NET_HTTP_START.bind_call(self, address, *arg, &block) unless Hash === opt

      port, p_addr, p_port, p_user, p_pass = *arg[0...-1]
      p_addr = :ENV if arg.size < 3
      port = https_default_port if !port && opt[:use_ssl]
      http = new(address, port, p_addr, p_port, p_user, p_pass)
      http.ipaddr = opt[:ipaddr] if opt[:ipaddr]
      opt = { verify_mode: OpenSSL::SSL::VERIFY_PEER }.update(opt) if opt[:use_ssl]
      # (loops, not blocks given to C methods: see DearCalls)
      keys = {}
      names = opt.keys
      i = 0
      while i < names.size
        key = names[i]
        keys[:"#{key}="] = key if Symbol === key && key.match?(WRITER)
        i += 1
      end
      writers = HTTPStart.writers(http, keys.keys)
      i = 0
      while i < writers.size
        http.__send__(writers[i], opt[keys[writers[i]]])
        i += 1
      end
      http.start(&block)
    end

    # http.methods & names
    def self.writers(http, names)
      if http.singleton_methods.empty?
        c = http.class
        found = []
        i = 0
        while i < names.size
          w = names[i]
          found << w if c.public_method_defined?(w) || c.protected_method_defined?(w)
          i += 1
        end
        return found if found.size <= 1
      end
      http.methods & names
    end
  end
  Net::HTTP.singleton_class.send(:define_method, :start, HTTPStart.instance_method(:start))

  # Net::HTTPGenericRequest#exec: the codec writes the request.
  module RequestExec
    def exec(sock, ver, path)
      return if NetHttpWasm::BufferedIO === sock && sock.codec_ready? && __nhw_exec(sock, ver, path)
      sock.raw_msg! if NetHttpWasm::BufferedIO === sock
      super
    end

    private

    # Sends the request through the codec: its record (schema/bridge.mjs
    # requestRecord) and its SEND_* flags;
    # true when sent, nil where net/http's own code must write the request
    # (a body stream or multipart body data, Expect: 100-continue, a "\n"
    # the line framing cannot carry, a field that is not a String name and
    # an Array of String values (set behind net/http's back), a non-ASCII
    # name, whose capitalization depends on its encoding, or encodings that
    # raise).
    def __nhw_exec(sock, ver, path)
      return nil if @body_stream || @body_data
      body = @body
      if body
        return nil unless String === body
        return nil if sock.continue_timeout && @header['expect']
      end
      m = @method
      return nil if m.include?("\n") || path.include?("\n")
      if body
        # what send_request_with_body does to the request before writing it
        self.content_length = body.bytesize
        delete 'Transfer-Encoding'
        supply_default_content_type if DEFAULT_CONTENT_TYPE
      end
      flags = (body ? SEND_BODY : 0) | (response_body_permitted? ? SEND_RESPONSE_BODY : 0) | (@decode_content ? SEND_DECODE : 0)
      hdr = ''.b
      flat = Lines.request_record(hdr, m, path, ver, @header)
      return nil unless flat
      flags |= flat
      return nil unless hdr.ascii_only? || @header.each_key.all?(&:ascii_only?)
      sending = true
      sock.codec_send(hdr, flags, body)
      true
    rescue Encoding::CompatibilityError
      # (the record could not be built: net/http writes the request)
      raise if sending
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
      # told what it does: @__nhw_inflate, from the head's fields; unset
      # when nothing). An Integer compared with nil, as a `case` would,
      # costs microseconds in ruby.wasm (Integer#== guards against recursion).
      if (inflate = @__nhw_inflate)
        if inflate == HEAD_INFLATE
          delete 'content-encoding'
          # Inflater#inflate_adapter makes the destination binary
          if dest.respond_to?(:set_encoding)
            dest.set_encoding(Encoding::ASCII_8BIT)
          elsif dest.respond_to?(:force_encoding)
            dest.force_encoding(Encoding::ASCII_8BIT)
          end
        elsif inflate == HEAD_DROP_ENCODING
          delete 'content-encoding'
        end
      end
      return sock.codec_read_body(dest, self) if @ignore_eof != false
      __nhw_read_body_to_length(sock, dest)
    end

    # ignore_eof = false: a body shorter than its length raises EOFError, as
    # BufferedIO#read(clen, dest, false) does (counted here for undecoded
    # bodies; the codec does not report the wire bytes of a decoded one).
    def __nhw_read_body_to_length(sock, dest)
      clen = (content_length || range_length unless chunked? || @__nhw_inflate == HEAD_INFLATE)
      return sock.codec_read_body(dest, self) unless clen
      counter = CountingDest.new(dest)
      sock.codec_read_body(counter, self)
      raise EOFError, 'end of file reached' if counter.bytes < clen
    end
  end
  Net::HTTPResponse.prepend(ResponseReadBody)

  # A read_body destination that counts what it is given.
  class CountingDest
    attr_reader :bytes

    def initialize(dest)
      @dest = dest
      @bytes = 0
    end

    def <<(str)
      @bytes += str.bytesize
      @dest << str
      self
    end
  end

  # Three steps of every request through net/http's own code make C calls
  # that run a block or guard one with setjmp, which ruby.wasm emulates by
  # unwinding the whole C stack and rewinding it (wasm/setjmp.c, Asyncify):
  # a few microseconds each, where MRI pays nanoseconds. The same steps, as
  # net/http takes them (the same in net-http 0.4.1 to 0.9.1), without
  # those calls; anything out of the ordinary goes to net/http's own code.
  module DearCalls
    CLOSE = /(?:\A|,)\s*close\s*(?:\z|,)/i
    KEEP_ALIVE = /(?:\A|,)\s*keep-alive\s*(?:\z|,)/i
    MAX_KEY = defined?(Net::HTTPHeader::MAX_KEY_LENGTH) ? Net::HTTPHeader::MAX_KEY_LENGTH : nil
    MAX_FIELD = defined?(Net::HTTPHeader::MAX_FIELD_LENGTH) ? Net::HTTPHeader::MAX_FIELD_LENGTH : nil

    # Net::HTTPHeader: net/http's use Enumerable#grep with a block
    # (`&.grep(token) { return true }`); Array#any? with the pattern tests
    # the same values with the same Regexp#===.
    module Header
      # net/http's own methods, which these replace
      NET_HTTP = %i[connection_close? connection_keep_alive? initialize_http_header].to_h { |m| [m, Net::HTTPHeader.instance_method(m)] }.freeze

      def connection_close?
        (v = @header['connection']) && v.any?(CLOSE) ||
          (v = @header['proxy-connection']) && v.any?(CLOSE) || false
      end

      def connection_keep_alive?
        (v = @header['connection']) && v.any?(KEEP_ALIVE) ||
          (v = @header['proxy-connection']) && v.any?(KEEP_ALIVE) || false
      end

      # net/http's walks the Hash with Hash#each (a setjmp for the walk and
      # one for each pair). Here: none (a response's), or a Hash of String
      # values, stripped, within net/http's lengths and with no CR/LF, and
      # no $VERBOSE (whose warnings name a caller by counting frames): the
      # same @header; anything else (nil values, other values, a value or
      # name too long, CR/LF, a Hash whose class defines its own each, keys
      # or values) is net/http's own, which raises or warns.
      def initialize_http_header(initheader)
        unless initheader
          @header = {}
          return
        end
        return NET_HTTP[:initialize_http_header].bind_call(self, initheader) if $VERBOSE || !Header.plain_walk?(initheader)
        header = {}
        keys = initheader.keys
        values = initheader.values
        i = 0
        n = keys.size
        while i < n
          key = keys[i]
          value = values[i]
          i += 1
          ok = String === value && (String === key || Symbol === key)
          value = value.strip if ok
          ok &&= value.count("\r\n") == 0 && !(MAX_KEY && key.to_s.bytesize > MAX_KEY) && !(MAX_FIELD && value.bytesize > MAX_FIELD)
          return NET_HTTP[:initialize_http_header].bind_call(self, initheader) unless ok
          header[key.downcase.to_s] = [value]
        end
        @header = header
        initheader
      end

      # Whether keys and values give what each would: a Hash (of Hash or of
      # a subclass, Faraday's headers) whose each, keys and values are
      # Hash's own, not its class's or its singleton's.
      def self.plain_walk?(h)
        Hash === h && h.method(:each).owner.equal?(Hash) && h.method(:keys).owner.equal?(Hash) &&
          h.method(:values).owner.equal?(Hash)
      end
    end
    # (replaced, not wrapped by a prepended module, as #connect)
    Header.instance_methods(false).each { |m| Net::HTTPHeader.send(:define_method, m, Header.instance_method(m)) }

    # Net::HTTP#transport_request reads the response inside
    # `catch(:response)` (Kernel#catch: a setjmp, and one more for its
    # block), for the `throw :response` of
    # Net::HTTPGenericRequest#wait_for_continue, which net/http makes only
    # when the socket has a continue_timeout. Without one, the block runs as
    # it is; a throw of :response from elsewhere still ends it with its
    # value (UncaughtThrowError, rescued here).
    module HTTPCatch
      private

      def catch(tag = Object.new)
        return super unless :response.equal?(tag) && Net::BufferedIO === (s = @socket) && !s.continue_timeout
        begin
          yield tag
        rescue UncaughtThrowError => e
          raise unless :response.equal?(e.tag)
          e.value
        end
      end
    end
    Net::HTTP.prepend(HTTPCatch)
  end
end
