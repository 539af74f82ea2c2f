# Stand-in for the `socket` extension, which ruby.wasm (WASI) does not ship.
# It exists only so that `require 'net/http'` loads for oracle use: the
# codec paths exercised by tests/support/oracle/runner.rb never open a connection.
class SocketError < StandardError; end unless defined?(SocketError)

class BasicSocket < IO
  def initialize(*)
    raise NotImplementedError, 'sockets are not available in ruby.wasm (oracle stand-in)'
  end
end

class IPSocket < BasicSocket; end

class TCPSocket < IPSocket
  # net-http 0.9.1 inspects this signature when it loads.
  def initialize(host, port, local_host = nil, local_port = nil, open_timeout: nil)
    raise NotImplementedError, 'sockets are not available in ruby.wasm (oracle stand-in)'
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

  def self.tcp(*)
    raise NotImplementedError, 'sockets are not available in ruby.wasm (oracle stand-in)'
  end

  def self.gethostname
    'localhost'
  end
end
