# frozen_string_literal: true
#
# Ruby's socket API over the host's connections: TCPSocket, Socket.tcp,
# Socket#connect for TCP, Addrinfo and IO.select, so that Ruby code which
# opens its own sockets runs. Each socket holds a NetHttpWasm::Socket (the
# connection Net::HTTP reads and writes too) and a read buffer of its own;
# the IO methods Ruby code calls are defined here, as a socket has no file
# descriptor in WASI. In a browser there are no raw sockets: connecting
# raises Errno::EHOSTUNREACH, saying so.

class BasicSocket < IO
  # What a socket reads at a time from the host.
  NHW_CHUNK = 16 * 1024

  # Sockets are binary, as MRI's (binmode, ASCII-8BIT).
  def initialize(*)
    raise NotImplementedError, 'net-http-wasm: a socket is made by TCPSocket.new, Socket.tcp or TCPServer#accept'
  end

  def self.for_fd(*)
    raise NotImplementedError, 'net-http-wasm: sockets in ruby.wasm have no file descriptors'
  end

  def self.do_not_reverse_lookup
    true
  end

  def self.do_not_reverse_lookup=(v)
    v
  end

  # -- set up by the subclasses --

  def __nhw_attach(sock, peer_host, peer_port)
    @__nhw = sock
    @__nhw_peer = [peer_host, peer_port]
    @__nhw_buf = +''.b
    @__nhw_rclosed = false
    @__nhw_wclosed = false
    @__nhw_timeout = nil
    @__nhw_opts = {}
    self
  end

  def __nhw_socket
    @__nhw
  end

  def inspect
    return "#<#{self.class}:(closed)>" if closed?
    "#<#{self.class}:fd #{fileno}, #{@__nhw_family || 'AF_INET'}, #{local_address.ip_address}, #{local_address.ip_port}>"
  end

  def to_io
    self
  end

  def fileno
    __nhw_open
    @__nhw.id + 4
  end
  alias to_i fileno

  def closed?
    @__nhw.nil? || @__nhw.closed?
  end

  def close
    return nil if closed?
    @__nhw.close
    @__nhw_buf = +''.b
    nil
  end

  # A half-close: the peer reads the end of the stream, this end still reads.
  def close_write
    __nhw_open
    return close if @__nhw_rclosed
    return nil if @__nhw_wclosed
    @__nhw_wclosed = true
    NetHttpWasm.bridge.call('shutdown', @__nhw.id)
    nil
  end

  def close_read
    __nhw_open
    return close if @__nhw_wclosed
    @__nhw_rclosed = true
    nil
  end

  def shutdown(how = ::Socket::SHUT_RDWR)
    __nhw_open
    how = ::Socket.const_get("SHUT_#{how.to_s.sub(/\ASHUT_/, '')}") if how.is_a?(Symbol) || how.is_a?(String)
    case how
    when ::Socket::SHUT_RD then @__nhw_rclosed = true
    when ::Socket::SHUT_WR then close_write
    when ::Socket::SHUT_RDWR
      @__nhw_rclosed = true
      close_write unless @__nhw_wclosed
    else raise SocketError, "invalid shutdown mode: #{how}"
    end
    0
  end

  def sync
    true
  end

  def sync=(v)
    v
  end

  def flush
    self
  end

  def fsync
    0
  end

  def binmode
    self
  end

  def binmode?
    true
  end

  def external_encoding
    Encoding::ASCII_8BIT
  end

  def internal_encoding
    nil
  end

  def set_encoding(*)
    self
  end

  def autoclose?
    true
  end

  def close_on_exec?
    true
  end

  def close_on_exec=(v)
    v
  end

  def tty?
    false
  end
  alias isatty tty?

  # IO#timeout (Ruby >= 3.2): reads and writes that wait longer raise IO::TimeoutError.
  def timeout
    @__nhw_timeout
  end

  def timeout=(t)
    @__nhw_timeout = t
  end

  # -- options --

  # Recorded and given back by getsockopt; the host keeps its own (TCP_NODELAY
  # is on for every host connection).
  def setsockopt(level, optname = nil, optval = nil)
    if level.is_a?(::Socket::Option)
      opt = level
      level, optname, optval = opt.level, opt.optname, opt.data
    end
    __nhw_open
    key = [::Socket.__nhw_const(level, 'SOL_', 'IPPROTO_'), ::Socket.__nhw_const(optname, 'SO_', 'TCP_')]
    @__nhw_opts[key] = optval
    # the ones the host honours
    host = if key == [::Socket::IPPROTO_TCP, ::Socket::TCP_NODELAY] then 'nodelay'
           elsif key == [::Socket::SOL_SOCKET, ::Socket::SO_KEEPALIVE] then 'keepalive'
           end
    if host
      on = optval.is_a?(String) ? optval.unpack1('i') != 0 : (optval != false && optval != 0 && !optval.nil?)
      NetHttpWasm.bridge.call('sockopt', @__nhw.id, host, on)
    end
    0
  end

  def getsockopt(level, optname)
    __nhw_open
    lv = ::Socket.__nhw_const(level, 'SOL_', 'IPPROTO_')
    on = ::Socket.__nhw_const(optname, 'SO_', 'TCP_')
    v = @__nhw_opts.fetch([lv, on]) { on == ::Socket::TCP_NODELAY && lv == ::Socket::IPPROTO_TCP ? 1 : 0 }
    v = v ? 1 : 0 if v == true || v == false
    data = v.is_a?(Integer) ? [v].pack('i') : v.to_s
    ::Socket::Option.new(::Socket::AF_INET, lv, on, data)
  end

  # -- addresses --

  def local_address
    __nhw_open
    s = @__nhw
    Addrinfo.tcp(s.instance_variable_get(:@laddr), s.instance_variable_get(:@lport))
  end

  def remote_address
    __nhw_open
    # both ends closed: the kernel has forgotten the peer
    raise Errno::ENOTCONN.new.exception('Transport endpoint is not connected - getpeername(2)') if @__nhw_wclosed && @__nhw.state == 2
    host, port = @__nhw_peer
    Addrinfo.tcp(NetHttpWasm.getaddress(host), port)
  end

  def getsockname
    local_address.to_sockaddr
  end

  def getpeername
    remote_address.to_sockaddr
  end

  # -- reading --

  def read(length = nil, outbuf = nil)
    __nhw_readable
    if length.nil?
      nil while __nhw_fill
      s = @__nhw_buf
      @__nhw_buf = +''.b
      return outbuf ? outbuf.replace(s) : s
    end
    length = Integer(length)
    raise ArgumentError, "negative length #{length} given" if length < 0
    return outbuf ? outbuf.replace(+''.b) : +''.b if length.zero?
    nil while @__nhw_buf.bytesize < length && __nhw_fill
    if @__nhw_buf.empty?
      outbuf&.replace(+'')
      return nil
    end
    __nhw_take(length, outbuf)
  end

  def readpartial(maxlen, outbuf = nil)
    __nhw_readable
    raise ArgumentError, "negative length #{maxlen} given" if maxlen < 0
    return outbuf ? outbuf.replace(+''.b) : +''.b if maxlen.zero?
    raise EOFError, 'end of file reached' if @__nhw_buf.empty? && !__nhw_fill
    __nhw_take(maxlen, outbuf)
  end

  def read_nonblock(maxlen, outbuf = nil, exception: true)
    __nhw_readable
    return outbuf ? outbuf.replace(+''.b) : +''.b if maxlen.zero?
    return __nhw_take(maxlen, outbuf) unless @__nhw_buf.empty?
    r = @__nhw.read_nonblock(maxlen, outbuf, exception: false)
    return r unless exception
    raise IO::EAGAINWaitReadable, 'read would block' if r == :wait_readable
    raise EOFError, 'end of file reached' if r.nil?
    r
  end

  def recv(maxlen, flags = 0, outbuf = nil)
    __nhw_readable
    if flags & ::Socket::MSG_PEEK != 0
      __nhw_fill if @__nhw_buf.empty?
      return @__nhw_buf.byteslice(0, maxlen)
    end
    return outbuf ? outbuf.replace(+''.b) : +''.b if maxlen.zero?
    return outbuf ? outbuf.replace(+''.b) : +''.b if @__nhw_buf.empty? && !__nhw_fill
    __nhw_take(maxlen, outbuf)
  end

  def recv_nonblock(maxlen, flags = 0, outbuf = nil, exception: true)
    r = read_nonblock(maxlen, outbuf, exception: exception)
    r.nil? ? +''.b : r
  end

  def gets(*args, chomp: false)
    __nhw_readable
    sep, limit = __nhw_line_args(args)
    return read_line_all(limit) if sep.nil?
    paragraph = sep.empty?
    if paragraph
      sep = "\n\n"
      # leading newlines are skipped
      while true
        @__nhw_buf.sub!(/\A\n+/, '')
        break unless @__nhw_buf.empty? && __nhw_fill
      end
    end
    from = 0
    while true
      i = @__nhw_buf.index(sep, from)
      if i && (limit.nil? || i + sep.bytesize <= limit)
        line = __nhw_take(i + sep.bytesize)
        @__nhw_buf.sub!(/\A\n+/, '') if paragraph
        return line unless chomp
        return sep == "\n" ? line.chomp : line.delete_suffix(sep)
      end
      return __nhw_take(limit) if limit && @__nhw_buf.bytesize >= limit
      from = [@__nhw_buf.bytesize - sep.bytesize + 1, 0].max
      next if __nhw_fill
      return nil if @__nhw_buf.empty?
      line = __nhw_take(limit || @__nhw_buf.bytesize)
      return chomp ? line.chomp : line
    end
  end

  def readline(*args, **kw)
    gets(*args, **kw) || raise(EOFError, 'end of file reached')
  end

  def each_line(*args, **kw)
    return enum_for(:each_line, *args, **kw) unless block_given?
    while (line = gets(*args, **kw))
      yield line
    end
    self
  end
  alias each each_line

  def readlines(*args, **kw)
    each_line(*args, **kw).to_a
  end

  def getbyte
    __nhw_readable
    return nil if @__nhw_buf.empty? && !__nhw_fill
    __nhw_take(1).ord
  end

  def readbyte
    getbyte || raise(EOFError, 'end of file reached')
  end

  def getc
    b = getbyte
    b&.chr
  end

  def readchar
    getc || raise(EOFError, 'end of file reached')
  end

  def each_byte
    return enum_for(:each_byte) unless block_given?
    while (b = getbyte)
      yield b
    end
    self
  end

  def ungetbyte(s)
    __nhw_open
    s = s.chr if s.is_a?(Integer)
    @__nhw_buf = s.to_s.b + @__nhw_buf
    nil
  end
  alias ungetc ungetbyte

  def eof?
    __nhw_readable
    @__nhw_buf.empty? && !__nhw_fill
  end
  alias eof eof?

  # -- writing --

  def write(*objs)
    __nhw_writable
    objs.sum do |o|
      s = o.to_s
      s = s.b unless s.encoding == Encoding::BINARY
      left = s.bytesize
      until left.zero?
        r = @__nhw.write_nonblock(left == s.bytesize ? s : s.byteslice(-left, left), exception: false)
        if r == :wait_writable
          raise IO::TimeoutError, 'Blocking operation timed out!' unless @__nhw.wait_writable(@__nhw_timeout)
        else
          left -= r
        end
      end
      s.bytesize
    end
  end

  def write_nonblock(str, exception: true)
    __nhw_writable
    s = str.to_s
    r = @__nhw.write_nonblock(s.encoding == Encoding::BINARY ? s : s.b, exception: false)
    raise IO::EAGAINWaitWritable, 'write would block' if r == :wait_writable && exception
    r
  end

  def syswrite(str)
    write(str)
  end

  def sysread(maxlen, outbuf = nil)
    readpartial(maxlen, outbuf)
  end

  def <<(obj)
    write(obj)
    self
  end

  def print(*objs)
    objs = [$_] if objs.empty?
    write(*objs, *([$\] if $\))
    nil
  end

  def puts(*objs)
    return write("\n") && nil if objs.empty?
    lines = []
    flat = lambda do |o|
      if o.is_a?(Array)
        o.each { |x| flat.call(x) }
      else
        s = o.nil? ? '' : o.to_s
        lines << (s.end_with?("\n") ? s : "#{s}\n")
      end
    end
    objs.each { |o| flat.call(o) }
    write(lines.join)
    nil
  end

  def printf(fmt, *args)
    write(format(fmt, *args))
    nil
  end

  def send(mesg, flags = 0, *dest)
    return super if mesg.is_a?(Symbol) # Object#send, as for any object
    write(mesg)
  end

  # -- waiting (io/wait) --

  def wait_readable(timeout = nil)
    __nhw_open
    return self unless @__nhw_buf.empty?
    @__nhw.wait_readable(timeout) ? self : nil
  end

  def wait_writable(timeout = nil)
    __nhw_open
    @__nhw.wait_writable(timeout) ? self : nil
  end

  def wait(*args)
    events = IO::READABLE
    timeout = nil
    if args[0].is_a?(Integer) && args.size == 2
      events, timeout = args
    elsif args.size >= 1
      timeout = args.find { |a| a.nil? || a.is_a?(Numeric) }
      mode = args.find { |a| a.is_a?(Symbol) }
      events = IO::WRITABLE if %i[w write writable].include?(mode)
      events = IO::READABLE | IO::WRITABLE if %i[rw read_write readable_writable].include?(mode)
    end
    return wait_writable(timeout) ? (args[0].is_a?(Integer) ? IO::WRITABLE : self) : nil if events & IO::READABLE == 0
    r = wait_readable(timeout)
    return nil unless r
    args[0].is_a?(Integer) ? IO::READABLE : self
  end

  def ready?
    __nhw_open
    !@__nhw_buf.empty? || @__nhw.state != 0
  end

  def nread
    __nhw_open
    @__nhw_buf.bytesize
  end

  # For IO.select: something to read now (or its end).
  def __nhw_ready?
    return true if closed? || !@__nhw_buf.empty?
    @__nhw.state != 0
  end

  def __nhw_id
    @__nhw.id
  end

  private

  def __nhw_open
    raise IOError, 'closed stream' if closed?
  end

  def __nhw_readable
    __nhw_open
    raise IOError, 'not opened for reading' if @__nhw_rclosed
  end

  def __nhw_writable
    __nhw_open
    raise IOError, 'not opened for writing' if @__nhw_wclosed
  end

  # Reads what the host has, waiting for it: false at the end of the stream.
  def __nhw_fill
    while true
      r = @__nhw.read_nonblock(NHW_CHUNK, exception: false)
      case r
      when String
        if @__nhw_buf.empty?
          @__nhw_buf = r
        else
          @__nhw_buf << r
        end
        return true
      when nil
        return false
      end
      raise IO::TimeoutError, 'Blocking operation timed out!' unless @__nhw.wait_readable(@__nhw_timeout)
    end
  end

  def __nhw_take(n, outbuf = nil)
    buf = @__nhw_buf
    s = if n >= buf.bytesize
      @__nhw_buf = +''.b
      buf
    else
      @__nhw_buf = buf.byteslice(n, buf.bytesize - n)
      buf.byteslice(0, n)
    end
    outbuf ? outbuf.replace(s) : s
  end

  def __nhw_line_args(args)
    sep = $/
    limit = nil
    case args.size
    when 0 then nil
    when 1
      a = args[0]
      if a.nil? || a.is_a?(String)
        sep = a
      elsif a.respond_to?(:to_str)
        sep = a.to_str
      else
        limit = Integer(a)
      end
    else
      sep = args[0].nil? ? nil : args[0].to_str
      limit = args[1].nil? ? nil : Integer(args[1])
    end
    limit = nil if limit && limit < 0
    [sep&.b, limit]
  end

  def read_line_all(limit)
    nil while (limit.nil? || @__nhw_buf.bytesize < limit) && __nhw_fill
    return nil if @__nhw_buf.empty?
    __nhw_take(limit || @__nhw_buf.bytesize)
  end
end

class IPSocket < BasicSocket
  def self.getaddress(host)
    NetHttpWasm.getaddress(host)
  end

  def addr(reverse_lookup = nil)
    a = local_address
    [a.ip_address.include?(':') ? 'AF_INET6' : 'AF_INET', a.ip_port, a.ip_address, a.ip_address]
  end

  def peeraddr(reverse_lookup = nil)
    a = remote_address
    [a.ip_address.include?(':') ? 'AF_INET6' : 'AF_INET', a.ip_port, a.ip_address, a.ip_address]
  end
end

class TCPSocket < IPSocket
  # net-http 0.9.1 reads this signature when it loads (open_timeout:).
  def initialize(host, port, local_host = nil, local_port = nil, open_timeout: nil, connect_timeout: nil, resolv_timeout: nil, fast_fallback: nil)
    t = open_timeout || connect_timeout
    if open_timeout && connect_timeout
      raise ArgumentError, 'Cannot specify open_timeout along with connect_timeout or resolv_timeout'
    end
    sock = NetHttpWasm.tcp_connect(host, port, local_host, local_port, t)
    __nhw_attach(sock, host, port)
  end

  def self.open(*args, **kw)
    s = new(*args, **kw)
    return s unless block_given?
    begin
      yield s
    ensure
      s.close
    end
  end

  def self.gethostbyname(host)
    a = NetHttpWasm.getaddress(host)
    [host, [], a.include?(':') ? ::Socket::AF_INET6 : ::Socket::AF_INET, a]
  end
end

# A listening socket on the host (node:net); each accepted connection is a
# TCPSocket over a host connection.
class TCPServer < TCPSocket
  def initialize(host = nil, port)
    host = host.to_str unless host.nil? || String === host
    NetHttpWasm.c_str(host)
    port = Addrinfo.__nhw_port(port)
    @__nhw_server = nil
    @__nhw_timeout = nil
    if NetHttpWasm.transport == 'fetch'
      raise NetHttpWasm.errno(Errno::EACCES, "bind(2) for #{host.to_s.dump} port #{port} " \
        '(net-http-wasm: a browser cannot listen for connections)')
    end
    r = NetHttpWasm.call_wait_or_now('listen', host.to_s, port, ::Socket::SOMAXCONN).to_s
    if r.start_with?('!')
      failure = NetHttpWasm::Lines::Failure.read(r[1..])
      # (a name the resolver has no address for: getaddrinfo(3)'s error, as TCPSocket's)
      NetHttpWasm::Socket.raise_open_error(failure, host, port) if failure.kind == 'resolve'
      code = failure.detail.to_s
      klass = Errno.const_defined?(code) ? Errno.const_get(code) : SystemCallError
      raise NetHttpWasm.errno(klass, "bind(2) for #{host.to_s.dump} port #{port}")
    end
    l = NetHttpWasm::Lines::Listening.read(r)
    @__nhw_server = [l.id, l.family, l.address, l.port]
  end

  def accept
    while true
      s = __nhw_accept(@__nhw_timeout)
      return s if s
      raise IO::TimeoutError, 'Blocking operation timed out!' if @__nhw_timeout
    end
  end

  def accept_nonblock(exception: true)
    __nhw_server_open
    if NetHttpWasm.bridge.call('acceptable', @__nhw_server[0]).to_i.zero?
      raise IO::EAGAINWaitReadable, 'accept(2) would block' if exception
      return :wait_readable
    end
    __nhw_accept(0)
  end

  def sysaccept
    accept.fileno
  end

  def listen(_backlog)
    __nhw_server_open
    0
  end

  def closed?
    @__nhw_server.nil? || @__nhw_server[0].nil?
  end

  def close
    return nil if closed?
    NetHttpWasm.bridge.call('unlisten', @__nhw_server[0])
    @__nhw_server[0] = nil
    nil
  end

  def fileno
    __nhw_server_open
    @__nhw_server[0] + 4
  end
  alias to_i fileno

  def local_address
    __nhw_server_open
    Addrinfo.tcp(@__nhw_server[2], @__nhw_server[3])
  end

  def addr(reverse_lookup = nil)
    __nhw_server_open
    _id, family, a, port = @__nhw_server
    [family, port, a, a]
  end

  def peeraddr(*)
    raise Errno::ENOTCONN.new.exception('Transport endpoint is not connected - getpeername(2)')
  end

  def inspect
    return "#<#{self.class}:(closed)>" if closed?
    "#<#{self.class}:fd #{fileno}, #{@__nhw_server[1]}, #{@__nhw_server[2]}, #{@__nhw_server[3]}>"
  end

  def setsockopt(*)
    __nhw_server_open
    0
  end

  def wait_readable(timeout = nil)
    __nhw_server_open
    IO.select([self], nil, nil, timeout) ? self : nil
  end

  def __nhw_ready?
    closed? || NetHttpWasm.bridge.call('acceptable', @__nhw_server[0]).to_i == 1
  end

  def __nhw_id
    "s#{@__nhw_server[0]}"
  end

  def __nhw_socket
    nil
  end

  %i[read readpartial read_nonblock gets write write_nonblock close_write close_read recv].each do |m|
    define_method(m) { |*| raise IOError, 'not opened for reading' }
  end

  private

  def __nhw_server_open
    raise IOError, 'closed stream' if closed?
  end

  # The next connection as a TCPSocket, waiting up to timeout seconds (nil: none).
  def __nhw_accept(timeout)
    __nhw_server_open
    r = NetHttpWasm.call_wait('accept', @__nhw_server[0], NetHttpWasm.ms(timeout)).to_s
    return nil if r.empty?
    NetHttpWasm.raise_failure(NetHttpWasm::Lines::Failure.read(r[1..])) if r.start_with?('!')
    a = NetHttpWasm::Lines::Accepted.read(r)
    sock = NetHttpWasm::Socket.new(NetHttpWasm.bridge, a.id, a.family, a.address, a.port, a.peer_address, a.peer_port)
    TCPSocket.allocate.__nhw_attach(sock, a.peer_address, a.peer_port)
  end
end

class Socket < BasicSocket
  SOCK_STREAM = 1 unless const_defined?(:SOCK_STREAM)
  MSG_PEEK = 2
  MSG_OOB = 1
  MSG_DONTWAIT = 64
  MSG_NOSIGNAL = 16384
  SO_REUSEPORT = 15
  SO_ERROR = 4
  SO_BROADCAST = 6
  SO_RCVTIMEO = 20
  SO_SNDTIMEO = 21
  SO_LINGER = 13 unless const_defined?(:SO_LINGER)
  SOL_TCP = IPPROTO_TCP
  IPV6_V6ONLY = 26
  AI_PASSIVE = 1
  AI_CANONNAME = 2
  AI_NUMERICHOST = 4
  NI_NUMERICHOST = 1
  NI_NUMERICSERV = 2
  INADDR_ANY = 0
  INADDR_LOOPBACK = 0x7f000001
  EAI_NONAME = -2
  EAI_AGAIN = -3

  # Socket::Constants, as MRI's: the constants, also for `include`.
  module Constants; end
  constants.each do |c|
    v = const_get(c)
    Constants.const_set(c, v) if v.is_a?(Integer) && c.to_s.match?(/\A[A-Z][A-Z0-9_]*\z/)
  end

  # A constant given by value, Symbol or String (:TCP_NODELAY, "NODELAY").
  def self.__nhw_const(v, *prefixes)
    return v if v.is_a?(Integer)
    name = v.to_s
    hit = ([''] + prefixes).map { |p| "#{p}#{name}" }.find { |n| const_defined?(n) }
    raise SocketError, "unknown socket level or option: #{name}" unless hit
    const_get(hit)
  end

  # A socket option (BasicSocket#getsockopt).
  class Option
    attr_reader :family, :level, :optname, :data

    def initialize(family, level, optname, data)
      @family = family
      @level = level
      @optname = optname
      @data = data
    end

    def self.int(family, level, optname, i)
      new(family, level, optname, [i].pack('i'))
    end

    def self.bool(family, level, optname, b)
      int(family, level, optname, b ? 1 : 0)
    end

    def int
      @data.unpack1('i')
    end

    def bool
      int != 0
    end

    def inspect
      "#<Socket::Option: #{@level} #{@optname} #{@data.bytesize == 4 ? int : @data.inspect}>"
    end
  end

  # Socket.new(:INET, :STREAM) then connect: TCP only.
  def initialize(family, type, protocol = 0)
    t = ::Socket.__nhw_const(type, 'SOCK_')
    raise Errno::EPROTONOSUPPORT, 'net-http-wasm: only SOCK_STREAM sockets' unless t == SOCK_STREAM
    @__nhw_family_n = ::Socket.__nhw_const(family, 'AF_', 'PF_')
    @__nhw_opts = {}
    @__nhw = nil
  end

  def closed?
    @__nhw.nil? ? !!@__nhw_closed_unconnected : @__nhw.closed?
  end

  def close
    @__nhw_closed_unconnected = true if @__nhw.nil?
    super
  end

  # (before connect: kept, and set once connected)
  def setsockopt(*args)
    return super unless @__nhw.nil?
    (@__nhw_early ||= []) << args
    0
  end

  # Connects to a packed address (Socket.sockaddr_in, Addrinfo#to_sockaddr) or an Addrinfo.
  def connect(sockaddr)
    raise Errno::EISCONN, 'Transport endpoint is already connected - connect(2)' if @__nhw
    ai = sockaddr.is_a?(Addrinfo) ? sockaddr : Addrinfo.new(sockaddr)
    sock = NetHttpWasm.tcp_connect(ai.ip_address, ai.ip_port, nil, nil, nil, sockaddr_text: ai.inspect_sockaddr)
    __nhw_attach(sock, ai.ip_address, ai.ip_port)
    (@__nhw_early || []).each { |a| setsockopt(*a) }
    @__nhw_early = nil
    0
  end

  # As MRI's over a connect in progress: the host connects in the first
  # call, which then says it would block (or raises the connect's error);
  # the socket is writable at once; the next call gives 0 (connected).
  def connect_nonblock(sockaddr, exception: true)
    return 0 if @__nhw
    connect(sockaddr)
    return :wait_writable unless exception
    raise IO::EINPROGRESSWaitWritable, 'connect(2) would block'
  end

  def self.tcp(host, port, local_host = nil, local_port = nil, connect_timeout: nil, resolv_timeout: nil, open_timeout: nil, fast_fallback: nil)
    t = open_timeout || connect_timeout
    # (Socket.tcp's own timer says so)
    sock = NetHttpWasm.tcp_connect(host, port, local_host, local_port, t, sockaddr_text: "#{host}:#{port}") do
      NetHttpWasm.errno(Errno::ETIMEDOUT, 'user specified timeout')
    end
    s = allocate
    s.__nhw_attach(sock, host, port)
    return s unless block_given?
    begin
      yield s
    ensure
      s.close
    end
  end

  def self.getaddrinfo(host, port, family = nil, socktype = nil, protocol = nil, flags = nil, reverse_lookup = nil)
    Addrinfo.getaddrinfo(host, port, family, socktype, protocol, flags).map do |a|
      fam = a.ipv6? ? 'AF_INET6' : 'AF_INET'
      [fam, a.ip_port, a.ip_address, a.ip_address, a.afamily, a.socktype, a.protocol]
    end
  end

  def self.sockaddr_in(port, host)
    Addrinfo.tcp(host, port).to_sockaddr
  end

  def self.pack_sockaddr_in(port, host)
    sockaddr_in(port, host)
  end

  def self.unpack_sockaddr_in(sockaddr)
    a = sockaddr.is_a?(Addrinfo) ? sockaddr : Addrinfo.new(sockaddr)
    [a.ip_port, a.ip_address]
  end

  def self.gethostname
    'localhost'
  end

  def self.ip_address_list
    [Addrinfo.ip('127.0.0.1')]
  end
end

# An address: made from an IP address and port (names are resolved by the
# host), or from a packed sockaddr_in / sockaddr_in6.
class Addrinfo
  attr_reader :afamily, :pfamily, :socktype, :protocol, :canonname

  def initialize(sockaddr, family = nil, socktype = nil, protocol = nil)
    if sockaddr.is_a?(Array)
      # ["AF_INET", port, host, addr]
      @ip = sockaddr[3] || sockaddr[2]
      @port = sockaddr[1].to_i
    else
      s = sockaddr.to_s.b
      fam = s.unpack1('S')
      if fam == ::Socket::AF_INET && s.bytesize >= 8
        @port = s.byteslice(2, 2).unpack1('n')
        @ip = s.byteslice(4, 4).unpack('C4').join('.')
      elsif fam == ::Socket::AF_INET6 && s.bytesize >= 24
        @port = s.byteslice(2, 2).unpack1('n')
        @ip = Addrinfo.__nhw_ip6_text(s.byteslice(8, 16))
      else
        raise ArgumentError, 'net-http-wasm: only sockaddr_in and sockaddr_in6 addresses'
      end
    end
    @afamily = @pfamily = @ip.include?(':') ? ::Socket::AF_INET6 : ::Socket::AF_INET
    @socktype = socktype.nil? ? 0 : ::Socket.__nhw_const(socktype, 'SOCK_')
    @protocol = protocol || 0
    @canonname = nil
  end

  def self.__nhw_make(ip, port, socktype, protocol, name = nil)
    a = new(['', port, ip, ip], nil, socktype, protocol)
    a.instance_variable_set(:@__nhw_name, name)
    a
  end

  def self.tcp(host, port)
    __nhw_make(NetHttpWasm.getaddress(host), __nhw_port(port), ::Socket::SOCK_STREAM, ::Socket::IPPROTO_TCP,
               __nhw_ip?(host.to_s) ? nil : host.to_s)
  end

  def self.ip(host)
    __nhw_make(NetHttpWasm.getaddress(host), 0, 0, 0, __nhw_ip?(host.to_s) ? nil : host.to_s)
  end

  # The host's resolver gives one address.
  def self.getaddrinfo(host, port, family = nil, socktype = nil, protocol = nil, flags = nil, timeout: nil)
    ip = NetHttpWasm.getaddress(host.nil? ? '127.0.0.1' : host)
    fam = family.nil? ? nil : ::Socket.__nhw_const(family, 'AF_', 'PF_')
    want6 = fam == ::Socket::AF_INET6
    return [] if fam && fam != ::Socket::AF_UNSPEC && (want6 != ip.include?(':'))
    st = socktype.nil? ? ::Socket::SOCK_STREAM : ::Socket.__nhw_const(socktype, 'SOCK_')
    pr = st == ::Socket::SOCK_STREAM ? ::Socket::IPPROTO_TCP : ::Socket::IPPROTO_UDP
    [__nhw_make(ip, __nhw_port(port), st, pr, host && !__nhw_ip?(host.to_s) ? host.to_s : nil)]
  end

  def self.foreach(*args, **kw, &blk)
    getaddrinfo(*args, **kw).each(&blk)
  end

  def self.__nhw_port(port)
    return 0 if port.nil?
    return port if port.is_a?(Integer)
    NetHttpWasm.c_str(port)
    return port.to_i if port.to_s.match?(/\A\d+\z/)
    { 'http' => 80, 'https' => 443, 'ftp' => 21, 'smtp' => 25, 'imap' => 143, 'pop3' => 110 }.fetch(port.to_s) do
      raise SocketError, 'getaddrinfo: Servname not supported for ai_socktype'
    end
  end

  def self.__nhw_ip?(s)
    s.match?(/\A\d{1,3}(?:\.\d{1,3}){3}\z/) || s.include?(':')
  end

  def self.__nhw_ip6_text(bytes)
    words = bytes.unpack('n8')
    # the longest run of zero words becomes "::"
    best = nil
    i = 0
    while i < 8
      if words[i].zero?
        j = i
        j += 1 while j < 8 && words[j].zero?
        best = [i, j - i] if j - i > 1 && (best.nil? || j - i > best[1])
        i = j
      else
        i += 1
      end
    end
    hex = words.map { |w| w.to_s(16) }
    return hex.join(':') unless best
    "#{hex[0, best[0]].join(':')}::#{hex[(best[0] + best[1])..].join(':')}"
  end

  def self.__nhw_ip6_bytes(text)
    head, tail = text.split('::', 2)
    h = head.to_s.split(':').map { |w| w.to_i(16) }
    t = tail.nil? ? [] : tail.split(':').map { |w| w.to_i(16) }
    words = tail.nil? ? h : h + [0] * (8 - h.size - t.size) + t
    words.pack('n8')
  end

  def ip_address
    @ip
  end

  def ip_port
    @port
  end

  def ip_unpack
    [@ip, @port]
  end

  def ip?
    true
  end

  def ipv4?
    @afamily == ::Socket::AF_INET
  end

  def ipv6?
    @afamily == ::Socket::AF_INET6
  end

  def unix?
    false
  end

  def ipv4_loopback?
    ipv4? && @ip.start_with?('127.')
  end

  def ipv6_loopback?
    ipv6? && @ip == '::1'
  end

  def ipv4_private?
    ipv4? && @ip.match?(/\A(10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.)/)
  end

  def to_sockaddr
    if ipv4?
      [::Socket::AF_INET, @port].pack('Sn') + @ip.split('.').map(&:to_i).pack('C4') + "\0" * 8
    else
      [::Socket::AF_INET6, @port, 0].pack('SnN') + Addrinfo.__nhw_ip6_bytes(@ip) + "\0" * 4
    end
  end
  alias to_s to_sockaddr

  def inspect_sockaddr
    ipv6? ? "[#{@ip}]:#{@port}" : "#{@ip}:#{@port}"
  end

  def inspect
    kind = @socktype == ::Socket::SOCK_STREAM ? ' TCP' : (@socktype == ::Socket::SOCK_DGRAM ? ' UDP' : '')
    shown = @port.zero? && @socktype.zero? ? @ip : inspect_sockaddr
    "#<Addrinfo: #{shown}#{kind}#{@__nhw_name ? " (#{@__nhw_name})" : ''}>"
  end

  # Socket.tcp to this address.
  def connect(timeout: nil, &blk)
    ::Socket.tcp(@ip, @port, connect_timeout: timeout, &blk)
  end

  # A socket bound to this address (the host's sockets bind as they listen:
  # it is a TCPServer; port 0 takes a free one), given to the block and
  # closed after it, as Addrinfo#bind does.
  def bind
    s = TCPServer.new(@ip, @port)
    return s unless block_given?

    begin
      yield s
    ensure
      s.close
    end
  end

  def getnameinfo(flags = 0)
    [@ip, @port.to_s]
  end
end

module NetHttpWasm
  class << self
    # A host connection for TCPSocket.new / Socket.tcp / Socket#connect
    # (one that TLS can start over: SSLSocket), raising what MRI raises
    # (Ruby 3.1, measured: a connect timed out is Errno::ETIMEDOUT naming
    # connect(2), or what the block gives).
    def tcp_connect(host, port, local_host, local_port, timeout, sockaddr_text: nil)
      host = host.to_str unless host.nil? || String === host
      c_str(host)
      c_str(local_host)
      host = 'localhost' if host.nil?
      port = Addrinfo.__nhw_port(port)
      if @transport == 'fetch'
        raise errno(Errno::EHOSTUNREACH, "connect(2) for #{host.dump} port #{port} " \
          '(net-http-wasm: a browser has no raw sockets; use Net::HTTP, which goes through fetch())')
      end
      local = local_host || local_port ? Lines::Local.new(local_host.to_s, local_port.to_i).to_s : ''
      r = call_wait_or_now('open', host, port, '', ms(timeout), local, true).to_s
      unless r.start_with?('!')
        o = Lines::Open.read(r)
        return Socket.new(@bridge, o.id, o.family, o.address, o.port, host, port)
      end
      failure = Lines::Failure.read(r[1..])
      kind = failure.kind
      detail = failure.detail.to_s
      where = sockaddr_text ? "connect(2) for #{sockaddr_text}" : %(connect(2) for #{host.dump} port #{port})
      case kind
      when 'timeout'
        raise yield if block_given?
        raise errno(Errno::ETIMEDOUT, where)
      when 'errno'
        klass = Errno.const_defined?(detail) ? Errno.const_get(detail) : SystemCallError
        raise errno(klass, where)
      else
        Socket.raise_open_error(failure, host, port)
      end
    end

    # As MRI's StringValueCStr for a host or service a socket call is
    # given: a String holding a NUL byte raises ArgumentError. s, else.
    def c_str(s)
      raise ArgumentError, 'string contains null byte' if String === s && s.include?("\0")
      s
    end
  end
end

class << IO
  # IO.select over sockets of the host (and nothing else: ruby.wasm has no
  # select(2)). A socket is writable while the host's send buffer has room.
  alias_method :__nhw_select, :select unless method_defined?(:__nhw_select)

  def select(readers, writers = nil, errors = nil, timeout = nil)
    all = [*readers, *writers, *errors]
    return __nhw_select(readers, writers, errors, timeout) unless all.any? { |io| io.to_io.is_a?(BasicSocket) }
    raise ArgumentError, "time interval must not be negative" if timeout && timeout < 0
    deadline = timeout && Process.clock_gettime(Process::CLOCK_MONOTONIC) + timeout
    while true
      r = (readers || []).select { |io| io.to_io.__nhw_ready? }
      w = (writers || []).select { |io| s = io.to_io; s.closed? || s.__nhw_socket.nil? || s.wait_writable(0) }
      return [r, w, []] unless r.empty? && w.empty?
      left = deadline && deadline - Process.clock_gettime(Process::CLOCK_MONOTONIC)
      return nil if left && left <= 0
      ids = (readers || []).map { |io| io.to_io.__nhw_id }
      if ids.empty?
        # only writers, each full: wait for room on the first
        writers.first.to_io.wait_writable(left)
      else
        NetHttpWasm.call_wait('waitAny', ids.join(','), NetHttpWasm.ms(left))
      end
    end
  end
end

# Resolv (Excon, and other clients that look names up themselves) reads
# /etc/hosts and asks the DNS servers of /etc/resolv.conf over UDP: the VM
# has neither. Once it is loaded, its default resolver asks the host, as
# IPSocket.getaddress does (a name the host cannot resolve has no address,
# as with Resolv's own resolvers).
module NetHttpWasm
  class HostResolver
    def each_address(name, &block)
      NetHttpWasm.getaddresses(name.to_s).each(&block)
    rescue SocketError
      nil
    end

    # (no reverse lookups: Resolv.getname raises Resolv::ResolvError)
    def each_name(_address)
      nil
    end
  end

  def self.use_host_resolver
    ::Resolv::DefaultResolver.instance_variable_set(:@resolvers, [HostResolver.new])
  end

end

if defined?(::Resolv::DefaultResolver)
  NetHttpWasm.use_host_resolver
else
  # (an alias chain, as rubygems makes its own: a module prepended to Kernel
  # would recurse once rubygems aliases the require it finds)
  module Kernel
    alias_method :__nhw_require_before_resolv, :require
    private :__nhw_require_before_resolv

    def require(path)
      loaded = __nhw_require_before_resolv(path)
      NetHttpWasm.use_host_resolver if loaded && (path == 'resolv' || path == 'resolv.rb')
      loaded
    end
    private :require
  end
end
