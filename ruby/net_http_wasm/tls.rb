# frozen_string_literal: true
#
# A Net::HTTP's TLS settings for the host's TLS (the JSON the transports
# read, js/ruby/node-connect.mjs), and the certificates an X509::Store was
# given, which the host must trust too.

module NetHttpWasm
  class << self
    # TLS settings of a Net::HTTP, as JSON for the bridge.
    def tls_params(http)
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
      h['verifyHostname'] = false if http.respond_to?(:verify_hostname) && http.verify_hostname == false
      h['cert'] = http.cert.to_pem if http.cert
      h['key'] = http.key.respond_to?(:private_to_pem) ? http.key.private_to_pem : http.key.to_pem if http.key
      h['minVersion'] = tls_version(http.min_version) if http.respond_to?(:min_version) && http.min_version
      h['maxVersion'] = tls_version(http.max_version) if http.respond_to?(:max_version) && http.max_version
      if http.respond_to?(:ssl_version) && http.ssl_version
        v = ssl_method_version(http.ssl_version)
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

    # OpenSSL::SSL::SSLContext#min_version= / max_version= (parse_proto_version
    # in ext/openssl: an Integer, or a name compared over the name's length,
    # else ArgumentError).
    PROTO_VERSIONS = [['SSL2', 0x0002], ['SSL3', 0x0300], ['TLS1', 0x0301], ['TLS1_1', 0x0302],
                      ['TLS1_2', 0x0303], ['TLS1_3', 0x0304]].freeze
    HOST_VERSIONS = { 0x0301 => 'TLSv1', 0x0302 => 'TLSv1.1', 0x0303 => 'TLSv1.2', 0x0304 => 'TLSv1.3' }.freeze

    def tls_version(v)
      return nil if v.nil?
      n = if v.is_a?(Integer)
        v
      else
        s = v.is_a?(Symbol) ? v.to_s : String(v)
        hit = PROTO_VERSIONS.find { |name, _| name.start_with?(s) }
        raise ArgumentError, "unrecognized version #{s.inspect}" unless hit
        hit[1]
      end
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
