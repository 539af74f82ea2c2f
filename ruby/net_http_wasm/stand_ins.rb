# frozen_string_literal: true
#
# Stand-ins for what ruby.wasm lacks and net/http needs by name: the socket
# and io/wait extensions (marked loaded, so that `require 'net/http'`
# works; TCPSocket itself cannot be used) and OpenSSL::SSL (ruby.wasm's
# openssl has X509, PKey, Digest... but no SSL: the host does TLS).

require 'rbconfig'

module NetHttpWasm
  # Marks a stand-in as loaded, so that `require feature` finds it: as a file
  # of Ruby's standard library ("/usr/local/lib/ruby/4.0.0"; head's folder
  # is named "4.1.0+4").
  def self.mark_loaded(feature)
    $LOADED_FEATURES << File.join(RbConfig::CONFIG['rubylibdir'], "#{feature}.rb")
  end
end

unless defined?(::TCPSocket)
  class SocketError < StandardError; end unless defined?(::SocketError)

  class BasicSocket < IO
    def initialize(*)
      raise NotImplementedError, 'net-http-wasm: there are no sockets in ruby.wasm; use Net::HTTP'
    end
  end

  class IPSocket < BasicSocket
    # URI::Generic#find_proxy calls it (with any *_proxy in ENV): the host
    # resolves the name.
    def self.getaddress(host)
      NetHttpWasm.getaddress(host)
    end
  end

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
    AF_UNIX = 1
    PF_UNSPEC = AF_UNSPEC
    PF_INET = AF_INET
    PF_INET6 = AF_INET6
    PF_UNIX = AF_UNIX
    IPPROTO_IP = 0
    IPPROTO_IPV6 = 41
    SOL_SOCKET = 1
    SO_REUSEADDR = 2
    SO_SNDBUF = 7
    SO_RCVBUF = 8
    SO_KEEPALIVE = 9
    SO_LINGER = 13
    TCP_NODELAY = 1
    TCP_KEEPIDLE = 4
    TCP_KEEPINTVL = 5
    TCP_KEEPCNT = 6
    SHUT_RD = 0
    SHUT_WR = 1
    SHUT_RDWR = 2
    SOMAXCONN = 4096

    # Ruby >= 3.3 raises this (a SocketError) when a name does not resolve;
    # 3.2 raises SocketError itself.
    if RUBY_VERSION >= '3.3'
      class ResolutionError < SocketError
        attr_reader :error_code
      end
    end

    def self.tcp(host, port, local_host = nil, local_port = nil, connect_timeout: nil, resolv_timeout: nil, open_timeout: nil)
      raise NotImplementedError, 'net-http-wasm: there are no sockets in ruby.wasm; use Net::HTTP'
    end

    def self.gethostname
      'localhost'
    end
  end

  # `require 'socket'` and `require 'io/wait'` now find these as loaded.
  NetHttpWasm.mark_loaded('socket')
  NetHttpWasm.mark_loaded('io/wait')
end

# WASI has no resource limits; gems size pools from the open-file limit
# (net-http-persistent 3.1: getrlimit(RLIMIT_NOFILE).first / 4). Linux's
# constant and its usual default soft and hard limits.
unless defined?(Process::RLIMIT_NOFILE)
  module Process
    RLIMIT_NOFILE = 7
    RLIM_INFINITY = (1 << 64) - 1

    def self.getrlimit(resource)
      raise Errno::EINVAL, 'getrlimit' unless [RLIMIT_NOFILE, :NOFILE, 'NOFILE'].include?(resource)
      [1024, 524_288]
    end
  end
end

# bigdecimal is a C extension ruby.wasm lacks; gems that only mention it
# when loading (multi_xml, for HTTParty) load, and using it says why not.
begin
  require 'bigdecimal'
rescue LoadError
  module Kernel
    private

    def BigDecimal(*)
      raise NotImplementedError, 'bigdecimal is a C extension that ruby.wasm does not include'
    end
  end
  NetHttpWasm.mark_loaded('bigdecimal')
end

# unf_ext (C; http-cookie and rest-client need it through domain_name and
# unf) normalizes Unicode as String#unicode_normalize does.
unless defined?(UNF::Normalizer)
  module UNF
    class Normalizer
      def normalize(string, form)
        string.unicode_normalize(form)
      end
    end
  end
  NetHttpWasm.mark_loaded('unf_ext')
end

require 'net/http'


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
        # (options: OP_ALL without OP_DONT_INSERT_EMPTY_FRAGMENTS, with OP_NO_COMPRESSION, as MRI's)
        DEFAULT_PARAMS = { verify_mode: VERIFY_PEER, verify_hostname: true, options: 0x80020050 }.freeze
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
