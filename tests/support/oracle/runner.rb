# frozen_string_literal: true
#
# The Ruby side of the differential tests: runs cases (see tests/support/oracle/README.md)
# through MRI's own net/http and uri, inside ruby.wasm.
#
# Loaded once per VM by tests/support/oracle/rubyvm.mjs; each batch is one call to
# NetHttpOracle.run_file(in_path, out_path), which reads a JSON array of cases
# and writes a JSON array of results (ASCII-only JSON, so any Unicode survives).

require 'net/http'
require 'json'
require 'stringio'

module NetHttpOracle
  # Net::HTTP's request classes, found by their METHOD constant.
  REQUEST_CLASSES = %w[Get Head Post Put Delete Options Trace Patch Propfind
                       Proppatch Mkcol Copy Move Lock Unlock].to_h { |n|
    k = Net::HTTP.const_get(n)
    [k::METHOD, k]
  }.freeze

  # Raised to tell the JS side that this VM is no longer trustworthy (the
  # ruby.wasm 3.4 leak shows up as SystemStackError or NoMemoryError).
  class VMBroken < StandardError; end

  # Header bag used by the each_capitalized and capitalize ops.
  class Fields
    include Net::HTTPHeader

    def initialize
      initialize_http_header(nil)
    end
  end

  # What Net::HTTPGenericRequest#exec writes to, instead of a
  # Net::BufferedIO over a binary StringIO.  Both end with the same bytes
  # (BufferedIO#write hands each string to StringIO#write_nonblock, which for
  # a binary StringIO copies the bytes unconverted), but BufferedIO#write
  # leaves its loop with a non-local `return`, which costs ~3.6 ms in
  # ruby.wasm 3.4.1 (and leaks).  exec only calls #write and #continue_timeout
  # on the socket for the bodies these cases use.  Used for 3.4 unless
  # NetHttpOracle.use_buffered_io is set; 4.0 always uses the real BufferedIO.
  class WriteSink
    attr_reader :string

    def initialize
      @string = +''.b
    end

    def continue_timeout
      nil
    end

    def write(*strs)
      n = 0
      strs.each { |s| @string << s.b; n += s.bytesize }
      n
    end

    alias << write
  end

  class << self
    attr_accessor :use_buffered_io
  end
  self.use_buffered_io = RUBY_VERSION >= '4.0'

  module_function

  # JSON numbers are normalised the way the JS API sees a JS number: one with
  # an integral value (Number.isInteger) is an Integer -- of the double's exact
  # value, so 12345678901234567890 is 12345678901234567168 as in JS -- and
  # anything else is a Float.  {"int": "digits"} is an exact Integer (a JS
  # BigInt), {"float": x} a Float even when integral (JS has no such value, so
  # ours.mjs cannot pass it: Ruby-only cases), {"base64": "..."} a binary
  # (ASCII-8BIT) String.
  def value(v)
    case v
    when Integer
      v.abs <= 9007199254740992 ? v : v.to_f.to_i
    when Float
      v.finite? && v == v.floor ? v.to_i : v
    when Hash
      if v.key?('float') then Float(v['float'])
      elsif v.key?('int') then Integer(v['int'])
      elsif v.key?('base64') then v['base64'].unpack1('m0')
      else raise VMBroken, "oracle: bad value #{v.inspect}"
      end
    when Array
      v.map { |x| value(x) }
    else
      v
    end
  end

  def form_pairs(pairs)
    pairs.map { |k, v| [value(k), value(v)] }
  end

  # A Ruby Hash from [[k, v], ...]: a later duplicate key overwrites the value
  # but keeps the first position, exactly as a Hash literal would.
  def init_hash(init)
    return nil if init.nil?
    h = {}
    init.each { |k, v| h[value(k)] = value(v) }
    h
  end

  def bin(s)
    [s.b].pack('m0')
  end

  # Strings in results must be valid UTF-8 to go through JSON; none of the
  # strings we return should be anything else, so say so loudly if one is.
  def text(s)
    s = s.to_s.dup.force_encoding(Encoding::UTF_8)
    s.valid_encoding? ? s : { 'invalid_utf8_base64' => bin(s) }
  end

  def error(e, step = nil)
    raise VMBroken, "#{e.class}: #{e.message}" if e.is_a?(SystemStackError) || e.is_a?(NoMemoryError)
    err = { 'class' => e.class.name, 'message' => text(e.message) }
    err['step'] = step unless step.nil?
    { 'error' => err }
  end

  def request(c)
    step = -1
    begin
      method = c['method']
      target = c['target']
      uri_or_path = target.key?('uri') ? URI(target['uri']) : target['path']
      init = init_hash(c['init'])
      klass = REQUEST_CLASSES[method.upcase]
      req = if klass
              klass.new(uri_or_path, init)
            else
              Net::HTTPGenericRequest.new(method, true, true, uri_or_path, init)
            end
      (c['ops'] || []).each_with_index do |op, i|
        step = i
        case op[0]
        when 'set' then req[op[1]] = value(op[2])
        when 'add' then req.add_field(op[1], value(op[2]))
        when 'delete' then req.delete(op[1])
        when 'form'
          if op[2].nil?
            req.set_form_data(form_pairs(op[1]))
          else
            req.set_form_data(form_pairs(op[1]), op[2])
          end
        when 'body' then req.body = value(op[1])
        when 'basic_auth' then req.basic_auth(value(op[1]), value(op[2]))
        when 'proxy_basic_auth' then req.proxy_basic_auth(value(op[1]), value(op[2]))
        when 'set_range'
          r = range_value(op[1])
          op.length > 2 ? req.set_range(r, value(op[2])) : req.set_range(r)
        when 'set_content_type'
          op.length > 2 ? req.set_content_type(value(op[1]), init_hash(op[2])) : req.set_content_type(value(op[1]))
        when 'content_length=' then req.content_length = value(op[1])
        when 'body_stream' then req.body_stream = stream_value(op[1])
        when 'set_form'
          # encode_multipart_form_data writes to a Tempfile: the batch folder
          ENV['TMPDIR'] = '/io' unless ENV['TMPDIR']
          params = op[1].map { |k, v, h| form_entry(k, v, h) }
          opts = (op[3] || {}).to_h { |k, v| [k.to_sym, v] }
          req.set_form(params, *[op[2] || 'application/x-www-form-urlencoded', opts])
        else raise VMBroken, "oracle: unknown op #{op[0].inspect}"
        end
      end
      step = (c['ops'] || []).length
      found = c['queries'] && queries(req, c['queries'])
      ver = c['version'] || '1.1'
      if NetHttpOracle.use_buffered_io
        io = StringIO.new(+''.b)
        req.exec(Net::BufferedIO.new(io), ver, req.path)
      else
        io = WriteSink.new
        req.exec(io, ver, req.path)
      end
      out = { 'bytes' => bin(io.string) }
      out['queries'] = found if found
      out
    rescue VMBroken
      raise
    rescue Exception => e # rubocop:disable Lint/RescueException
      error(e, step)
    end
  end

  # A body_stream that hands its pieces out as a pipe does: readpartial
  # (which IO.copy_stream prefers) returns at most the rest of the current
  # piece, and never an empty string.
  class PieceIO
    def initialize(pieces)
      @pieces = pieces.map(&:b).reject(&:empty?)
    end

    def readpartial(len, buf = nil)
      raise EOFError, 'end of file reached' if @pieces.empty?
      s = @pieces[0].byteslice(0, len)
      rest = @pieces[0].byteslice(s.bytesize, @pieces[0].bytesize - s.bytesize)
      rest.empty? ? @pieces.shift : @pieces[0] = rest
      buf ? buf.replace(s) : s
    end
  end

  # body_stream values: {"pieces": [v, ...]} is a PieceIO, {"stringio": v} a StringIO.
  def stream_value(v)
    return PieceIO.new(v['pieces'].map { |x| value(x) }) if v.key?('pieces')
    StringIO.new(value(v['stringio']).b)
  end

  # An IO with a path, as a File is for encode_multipart_form_data.
  class NamedIO < StringIO
    def initialize(bytes, path)
      super(bytes)
      @path = path
    end

    def to_path
      @path
    end
  end

  # set_form entries: {"io": base64} is a StringIO, {"file": {"name", "base64"}}
  # an IO with to_path; the options hash gets symbol keys.
  def form_entry(k, v, h)
    v = if v.is_a?(Hash) && v.key?('io') then StringIO.new(v['io'].unpack1('m0'))
        elsif v.is_a?(Hash) && v.key?('file') then NamedIO.new(v['file']['base64'].unpack1('m0'), v['file']['name'])
        else value(v)
        end
    h.nil? ? [k, v] : [k, v, h.to_h { |hk, hv| [hk.to_sym, hv] }]
  end

  # {"range": [begin, end, exclude_end]} is a Range; anything else a value.
  def range_value(v)
    return value(v) unless v.is_a?(Hash) && v.key?('range')
    b, e, x = v['range']
    Range.new(value(b), value(e), x)
  end

  def int_s(v)
    v.nil? ? nil : v.to_s
  end

  # Net::HTTPHeader's readers, each rescued on its own.
  def query(h, q)
    case q[0]
    when 'range' then h.range&.map { |r| [r.begin.to_s, r.end.to_s] }
    when 'content_range'
      r = h.content_range
      r && [r.begin.to_s, r.end.to_s]
    when 'range_length' then int_s(h.range_length)
    when 'content_length' then int_s(h.content_length)
    when 'chunked?' then h.chunked?
    when 'content_type' then h.content_type&.then { |s| text(s) }
    when 'main_type' then h.main_type&.then { |s| text(s) }
    when 'sub_type' then h.sub_type&.then { |s| text(s) }
    when 'type_params' then h.type_params.map { |k, v| [text(k), text(v)] }
    when 'connection_close?' then h.connection_close?
    when 'connection_keep_alive?' then h.connection_keep_alive?
    when 'get_fields' then h.get_fields(q[1])&.map { |s| text(s) }
    when 'fetch'
      r = q.length > 2 ? h.fetch(q[1], value(q[2])) : h.fetch(q[1])
      r.is_a?(String) ? text(r) : r
    when 'fetch_block' then text(h.fetch(q[1]) { |k| "block:#{k}" })
    else raise VMBroken, "oracle: unknown query #{q[0].inspect}"
    end
  rescue VMBroken
    raise
  rescue Exception => e # rubocop:disable Lint/RescueException
    error(e)
  end

  def queries(h, list)
    list.map { |q| query(h, q) }
  end

  # A response read as Net::HTTP reads it, then the readers.
  def response_header(c)
    sock = Net::BufferedIO.new(StringIO.new(c['bytes'].unpack1('m0')))
    res = Net::HTTPResponse.read_new(sock)
    res.reading_body(sock, true) {}
    { 'queries' => queries(res, c['queries']) }
  end

  def run_case(c)
    case c['op']
    when 'request'
      request(c)
    when 'response_header'
      response_header(c)
    when 'encode_www_form'
      { 'string' => text(URI.encode_www_form(form_pairs(c['pairs']))) }
    when 'encode_www_form_component'
      { 'string' => text(URI.encode_www_form_component(value(c['str']))) }
    when 'decode_www_form'
      pairs = if c.key?('separator')
                URI.decode_www_form(c['str'], separator: c['separator'])
              else
                URI.decode_www_form(c['str'])
              end
      { 'pairs' => pairs.map { |k, v| [text(k), text(v)] } }
    when 'decode_www_form_component'
      { 'base64' => bin(URI.decode_www_form_component(c['str'])) }
    when 'each_capitalized'
      f = Fields.new
      c['fields'].each { |k, v| f.add_field(value(k), value(v)) }
      out = []
      f.each_capitalized { |k, v| out << [text(k), text(v)] }
      { 'pairs' => out }
    when 'capitalize'
      { 'string' => text(Fields.new.send(:capitalize, value(c['name']))) }
    else
      raise VMBroken, "oracle: unknown op #{c['op'].inspect}"
    end
  rescue VMBroken
    raise
  rescue Exception => e # rubocop:disable Lint/RescueException
    error(e)
  end

  # Runs the cases in in_path and writes their results to out_path.  If the VM
  # breaks, the results so far are written with {"broken": message} last, so
  # the caller can start a fresh VM and go on from there.
  def run_file(in_path, out_path)
    cases = JSON.parse(File.read(in_path, encoding: 'UTF-8'))
    results = []
    begin
      cases.each { |c| results << run_case(c) }
    rescue VMBroken, SystemStackError, NoMemoryError => e
      results << { 'broken' => "#{e.class}: #{e.message}" }
    end
    File.write(out_path, JSON.generate(results, ascii_only: true))
    results.length
  end
end
