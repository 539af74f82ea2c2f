# The Ruby clients of the client benchmark, the same code in native MRI
# (mri-client.rb) and in ruby.wasm (rubywasm-client.mjs):
#
#   net-http             Net::HTTP — one-off: Net::HTTP.get_response(uri);
#                        persistent: Net::HTTP.start { |http| http.request(get) } per lane
#   net-http-persistent  one Net::HTTP::Persistent shared by the lanes (persistent only)
#   faraday              Faraday — one-off: the net_http adapter;
#                        persistent: the net_http_persistent adapter
#   open-uri             URI.open(uri) { |f| f.read } (one-off only)
#   tcpsocket            seed 001's raw socket: a GET written to a TCPSocket (an
#                        OpenSSL::SSL::SSLSocket over it for https), the response
#                        read by its Content-Length
#   excon                Excon (over TCPSocket) — one-off: Excon.get(url);
#                        persistent: an Excon.new(origin, persistent: true) per lane
#   httpclient           httpclient (over TCPSocket) — one-off: an HTTPClient per
#                        request, its connection closed after it (reset_all);
#                        persistent: one HTTPClient shared by the lanes
#   httprb               http.rb (over TCPSocket; in ruby.wasm its parser is
#                        net-http-wasm's HttpParser) — one-off: HTTP.get(url);
#                        persistent: an HTTP.persistent(origin) client per lane
#
# ClientBench.setup(name, url, modes) → { mode => nil | "why not available" };
# a run: start_run(len, sha256), then lane(mode, count) for each lane (at once
# for -c K), then finish_run → JSON {"ok", "errors", "latMs"}.
require 'uri'
require 'net/http'
require 'digest'
require 'json'

module ClientBench
  # Counts a run's answers (all lanes'): OK is status 200 and the expected
  # body. The last good body is kept, so only a body that differs from it is
  # hashed.
  class Tally
    def initialize(len, sha256)
      @mutex = Mutex.new
      @len = len
      @sha256 = sha256
      @good = nil
      @ok = 0
      @errors = Hash.new(0)
      @lat = []
    end

    def answer(status, body, ms)
      @mutex.synchronize { check(status, body, ms) }
    end

    def error(e, ms)
      @mutex.synchronize do
        @lat << ms
        count_error("#{e.class}: #{e.message}"[0, 200])
      end
    end

    def to_h
      { 'ok' => @ok, 'errors' => @errors, 'latMs' => @lat }
    end

    private

    def check(status, body, ms)
      @lat << ms
      return count_error("status #{status}") unless status == 200

      b = body.encoding == Encoding::BINARY ? body : body.b
      return @ok += 1 if @good && b == @good
      return count_error("body of #{b.bytesize} bytes, expected #{@len}") unless b.bytesize == @len
      return count_error('body differs (sha256)') unless Digest::SHA256.hexdigest(b) == @sha256

      @good = b.dup
      @ok += 1
    end

    def count_error(key)
      @errors[key] += 1
    end
  end

  # One lane's view of the run's tally: how many of its requests are done.
  class Lane
    attr_reader :done

    def initialize(tally)
      @tally = tally
      @done = 0
    end

    def answer(status, body, ms)
      @done += 1
      @tally.answer(status, body, ms)
    end

    def error(e, ms)
      @done += 1
      @tally.error(e, ms)
    end
  end

  def self.now_ms
    Process.clock_gettime(Process::CLOCK_MONOTONIC, :float_millisecond)
  end

  # count requests, each `yield` → [status, body]
  def self.each_request(count, tally)
    i = 0
    while i < count
      t0 = now_ms
      begin
        status, body = yield
        tally.answer(status, body, now_ms - t0)
      rescue StandardError, ScriptError => e
        tally.error(e, now_ms - t0)
      end
      i += 1
    end
  end

  class NetHttp
    def initialize(uri, _modes)
      @uri = uri
    end

    def lane(mode, count, tally)
      if mode == 'persistent'
        Net::HTTP.start(@uri.host, @uri.port, use_ssl: @uri.scheme == 'https') do |http|
          ClientBench.each_request(count, tally) do
            r = http.request(Net::HTTP::Get.new(@uri))
            [r.code.to_i, r.body]
          end
        end
      else
        ClientBench.each_request(count, tally) do
          r = Net::HTTP.get_response(@uri)
          [r.code.to_i, r.body]
        end
      end
    end
  end

  class NetHttpPersistent
    def initialize(uri, _modes)
      require 'net/http/persistent'
      @uri = uri
      @http = Net::HTTP::Persistent.new(name: 'bench')
    end

    def lane(_mode, count, tally)
      ClientBench.each_request(count, tally) do
        r = @http.request(@uri)
        [r.code.to_i, r.body]
      end
    end
  end

  class Faraday
    def initialize(uri, modes)
      require 'faraday'
      @uri = uri
      origin = "#{uri.scheme}://#{uri.host}:#{uri.port}"
      @conns = {}
      @conns['oneoff'] = ::Faraday.new(url: origin) { |f| f.adapter :net_http } if modes.include?('oneoff')
      return unless modes.include?('persistent')

      require 'net/http/persistent' # what the adapter loads on first use
      @conns['persistent'] = ::Faraday.new(url: origin) { |f| f.adapter :net_http_persistent }
    end

    def lane(mode, count, tally)
      conn = @conns[mode]
      path = @uri.request_uri
      ClientBench.each_request(count, tally) do
        r = conn.get(path)
        [r.status, r.body]
      end
    end
  end

  class OpenUri
    def initialize(uri, _modes)
      require 'open-uri'
      @uri = uri
    end

    def lane(_mode, count, tally)
      ClientBench.each_request(count, tally) do
        URI.open(@uri) { |f| [f.status[0].to_i, f.read] }
      end
    end
  end

  class RawSocket
    def initialize(uri, _modes)
      require 'socket'
      @uri = uri
      @tls = uri.scheme == 'https'
      if @tls
        require 'openssl'
        @ctx = OpenSSL::SSL::SSLContext.new
        @ctx.set_params(verify_mode: OpenSSL::SSL::VERIFY_PEER)
      end
      connect.close # a runtime without sockets says so here
    end

    def connect
      sock = TCPSocket.new(@uri.host, @uri.port)
      sock.setsockopt(Socket::IPPROTO_TCP, Socket::TCP_NODELAY, 1)
      return sock unless @tls

      ssl = OpenSSL::SSL::SSLSocket.new(sock, @ctx)
      ssl.sync_close = true
      ssl.hostname = @uri.host unless @uri.host =~ /\A[\d.]+\z/
      ssl.connect
      ssl.post_connection_check(@uri.host)
      ssl
    end

    def lane(mode, count, tally)
      keep = mode == 'persistent'
      request = "GET #{@uri.request_uri} HTTP/1.1\r\nHost: #{@uri.host}:#{@uri.port}\r\n#{keep ? '' : "Connection: close\r\n"}\r\n"
      sock = nil
      ClientBench.each_request(count, tally) do
        sock ||= connect
        begin
          sock.write(request)
          head = sock.gets("\r\n\r\n") or raise EOFError, 'the server closed the connection'
          len = head[/^content-length:[ \t]*(\d+)/i, 1] or raise 'no Content-Length in the response'
          body = sock.read(len.to_i)
          raise EOFError, 'the response body was cut short' unless body && body.bytesize == len.to_i

          [head[9, 3].to_i, body]
        rescue StandardError
          sock.close
          sock = nil
          raise
        ensure
          unless keep || sock.nil?
            sock.close
            sock = nil
          end
        end
      end
    ensure
      sock&.close
    end
  end

  class Excon
    def initialize(uri, _modes)
      require 'excon'
      @uri = uri
      @origin = "#{uri.scheme}://#{uri.host}:#{uri.port}"
    end

    def lane(mode, count, tally)
      url = @uri.to_s
      if mode == 'persistent'
        conn = ::Excon.new(@origin, persistent: true)
        path = @uri.request_uri
        begin
          ClientBench.each_request(count, tally) do
            r = conn.get(path: path)
            [r.status, r.body]
          end
        ensure
          conn.reset
        end
      else
        ClientBench.each_request(count, tally) do
          r = ::Excon.get(url)
          [r.status, r.body]
        end
      end
    end
  end

  class HTTPClient
    def initialize(uri, modes)
      require 'httpclient'
      @uri = uri
      @shared = ::HTTPClient.new if modes.include?('persistent')
    end

    def lane(mode, count, tally)
      url = @uri.to_s
      ClientBench.each_request(count, tally) do
        c = mode == 'persistent' ? @shared : ::HTTPClient.new
        begin
          r = c.get(url)
          [r.status, r.body]
        ensure
          c.reset_all unless mode == 'persistent'
        end
      end
    end
  end

  class HTTPRb
    def initialize(uri, _modes)
      require 'http'
      @uri = uri
      @origin = "#{uri.scheme}://#{uri.host}:#{uri.port}"
    end

    def lane(mode, count, tally)
      if mode == 'persistent'
        path = @uri.request_uri
        ::HTTP.persistent(@origin) do |http|
          ClientBench.each_request(count, tally) do
            r = http.get(path)
            [r.code, r.to_s]
          end
        end
      else
        url = @uri.to_s
        ClientBench.each_request(count, tally) do
          r = ::HTTP.get(url)
          [r.code, r.to_s]
        end
      end
    end
  end

  CLIENTS = {
    'net-http' => NetHttp,
    'net-http-persistent' => NetHttpPersistent,
    'faraday' => Faraday,
    'open-uri' => OpenUri,
    'tcpsocket' => RawSocket,
    'excon' => Excon,
    'httpclient' => HTTPClient,
    'httprb' => HTTPRb,
  }.freeze

  class << self
    # Loads what the client needs; a mode whose library fails to load (or a
    # runtime without what it needs) gets the error as its reason.
    def setup(name, url, modes)
      uri = URI(url)
      klass = CLIENTS.fetch(name)
      out = {}
      i = 0
      while i < modes.size
        begin
          klass.new(uri, [modes[i]])
          out[modes[i]] = nil
        rescue ScriptError, StandardError => e
          out[modes[i]] = "#{e.class}: #{e.message}"[0, 300]
        end
        i += 1
      end
      ok = modes.reject { |m| out[m] }
      @client = ok.empty? ? nil : klass.new(uri, ok)
      out
    end

    def version
      v = ["ruby #{RUBY_VERSION}", "net-http #{Net::HTTP::VERSION}"]
      v << "net-http-persistent #{Net::HTTP::Persistent::VERSION}" if defined?(Net::HTTP::Persistent::VERSION)
      v << "faraday #{::Faraday::VERSION}" if defined?(::Faraday::VERSION)
      v << "excon #{::Excon::VERSION}" if defined?(::Excon::VERSION)
      v << "httpclient #{::HTTPClient::VERSION}" if defined?(::HTTPClient::VERSION)
      v << "http.rb #{::HTTP::VERSION}" if defined?(::HTTP::VERSION)
      v.join(', ')
    end

    def start_run(len, sha256)
      @tally = Tally.new(len, sha256)
    end

    # One lane: count requests one after the other. Lanes of a run may run at
    # once (threads in MRI, concurrent evalAsync calls in ruby.wasm).
    def lane(mode, count)
      lane = Lane.new(@tally)
      @client.lane(mode, count, lane)
    rescue StandardError, ScriptError => e
      # the lane's session failed outside a request: its requests not made fail
      lane.error(e, 0.0) while lane.done < count
    end

    def finish_run
      JSON.generate(@tally.to_h)
    end
  end
end
