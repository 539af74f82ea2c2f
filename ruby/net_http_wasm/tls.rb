# frozen_string_literal: true
#
# A Net::HTTP's TLS settings for the host's TLS (the JSON the transports
# read, js/ruby/node-connect.mjs), and the certificates an X509::Store was
# given, which the host must trust too.

module NetHttpWasm
  class << self
    # TLS settings of a Net::HTTP, as JSON for the bridge; session: an
    # OpenSSL::SSL::Session to resume.
    def tls_params(http, session = nil)
      mode = http.verify_mode
      verify = mode.nil? || mode != OpenSSL::SSL::VERIFY_NONE
      h = { 'verify' => verify, 'ca' => [], 'caFiles' => [], 'caDirs' => [] }
      store = http.cert_store
      h['defaultPaths'] = store.nil? || store.instance_variable_get(:@__nhw_default) ? true : false
      if store
        (store.instance_variable_get(:@__nhw_pems) || []).each { |pem| h['ca'] << pem }
        (store.instance_variable_get(:@__nhw_files) || []).each { |f| h['caFiles'] << f }
        (store.instance_variable_get(:@__nhw_dirs) || []).each { |d| h['caDirs'] << d }
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
          h['caDirs'] << dir.to_s # a folder on the host (Node reads it)
        end
      end
      # SNI and the name checked: the host's name, also when connecting to ipaddr
      h['servername'] = http.address.to_s
      h['chain'] = true if http.verify_callback
      h['verifyHostname'] = false if http.respond_to?(:verify_hostname) && http.verify_hostname == false
      h['cert'] = http.cert.to_pem if http.cert
      h['key'] = http.key.respond_to?(:private_to_pem) ? http.key.private_to_pem : http.key.to_pem if http.key
      if http.respond_to?(:min_version) && http.min_version
        v = tls_version(http.min_version, 'min')
        h['minVersion'] = v if v # (SSL 3.0: the host's lowest)
      end
      if http.respond_to?(:max_version) && http.max_version
        v = tls_version(http.max_version, 'max')
        v ? h['maxVersion'] = v : h['noProtocols'] = true
      end
      if http.respond_to?(:ssl_version) && http.ssl_version
        v = ssl_method_version(http.ssl_version)
        v == :none ? h['noProtocols'] = true : (h['minVersion'] = h['maxVersion'] = v if v)
      end
      if http.ciphers
        h['ciphers'] = http.ciphers.is_a?(Array) ? http.ciphers.map { |c| c.is_a?(Array) ? c[0] : c }.join(':') : http.ciphers.to_s
      end
      h['session'] = [session.to_der].pack('m0') if session
      JSON.generate(h)
    end

    # The certificate check of an OpenSSL handshake with a verify_callback
    # (ssl_verify_callback in ext/openssl/ossl_ssl.c), run after the host's
    # handshake on the chain the peer presented: the callback is called for
    # each certificate, with the host name check folded into the leaf's
    # preverify_ok (when Net::HTTP gives OpenSSL the name: not for an IP
    # address); its answers decide. Then Net::HTTP's post_connection_check.
    def verify_peer(http, sock)
      cb = http.verify_callback
      peer, chain, name_ok, trusted = sock.peer_verify_info
      return unless cb && chain && !chain.empty?
      check_name = http.verify_hostname != false
      in_handshake = check_name && !http.address.to_s.match?(/\A(\d{1,3}(\.\d{1,3}){3}|\[?[0-9a-fA-F:]*:[0-9a-fA-F:.]*\]?)\z/)
      store = trust_store(trusted)
      ok = store.verify(chain[0], chain[1..]) do |preverify_ok, ctx|
        if preverify_ok && in_handshake && ctx.error_depth == 0 && !name_ok
          preverify_ok = false
          ctx.error = OpenSSL::X509::V_ERR_HOSTNAME_MISMATCH
        end
        cb.call(preverify_ok, ctx)
      end
      verify = http.verify_mode.nil? || http.verify_mode != OpenSSL::SSL::VERIFY_NONE
      return unless verify
      unless ok
        raise OpenSSL::SSL::SSLError, "SSL_connect returned=1 errno=0 peeraddr=#{peer} " \
          "state=error: certificate verify failed (#{store.error_string})"
      end
      if check_name && !name_ok
        raise OpenSSL::SSL::SSLError, "hostname \"#{http.address}\" does not match the server certificate"
      end
    end

    # An X509::Store of these PEMs; the last one is kept (the default roots
    # are parsed once).
    def trust_store(pems)
      return @trust_store[1] if @trust_store && @trust_store[0] == pems
      store = OpenSSL::X509::Store.new
      pems.scan(/-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----/m).uniq.each do |pem|
        store.add_cert(OpenSSL::X509::Certificate.new(pem))
      rescue OpenSSL::X509::StoreError
        nil # the same certificate twice
      end
      @trust_store = [pems, store]
      store
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

    # OpenSSL::SSL::SSLContext#min_version= / max_version= (parse_proto_version
    # in ext/openssl: an Integer, or a name compared over the name's length,
    # else ArgumentError).
    PROTO_VERSIONS = [['SSL2', 0x0002], ['SSL3', 0x0300], ['TLS1', 0x0301], ['TLS1_1', 0x0302],
                      ['TLS1_2', 0x0303], ['TLS1_3', 0x0304]].freeze
    HOST_VERSIONS = { 0x0301 => 'TLSv1', 0x0302 => 'TLSv1.1', 0x0303 => 'TLSv1.2', 0x0304 => 'TLSv1.3' }.freeze

    # The host's name of a protocol version: nil for SSL 3.0 (which the
    # host's TLS does not speak); SSL 2.0 is refused as OpenSSL refuses it
    # (which: 'min' or 'max').
    def tls_version(v, which = 'max')
      return nil if v.nil?
      n = if v.is_a?(Integer)
        v
      else
        s = v.is_a?(Symbol) ? v.to_s : String(v)
        hit = PROTO_VERSIONS.find { |name, _| name.start_with?(s) }
        raise ArgumentError, "unrecognized version #{s.inspect}" unless hit
        hit[1]
      end
      raise OpenSSL::SSL::SSLError, "SSL_CTX_set_#{which}_proto_version" if n < 0x0300
      HOST_VERSIONS[n]
    end

    # ssl_version= (a method name of OpenSSL's: TLSv1_2, :TLSv1_2_client...)
    def ssl_method_version(v)
      case v.to_s.sub(/_(client|server)\z/, '')
      when 'TLSv1' then 'TLSv1'
      when 'TLSv1_1' then 'TLSv1.1'
      when 'TLSv1_2' then 'TLSv1.2'
      when 'TLSv1_3' then 'TLSv1.3'
      when 'SSLv23', 'TLS' then nil
      when 'SSLv3' then :none # (a method the host's TLS does not have)
      else raise ArgumentError, "unknown SSL method `#{v}'"
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
      (@__nhw_dirs ||= []) << path.to_s # a folder on the host
      self
    end

    def set_default_paths
      @__nhw_default = true
      super
    end
  end
  OpenSSL::X509::Store.prepend(StoreRecorder) if defined?(OpenSSL::X509::Store)
end
