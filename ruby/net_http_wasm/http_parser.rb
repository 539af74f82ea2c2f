# frozen_string_literal: true
#
# A stand-in for the http-parser gem (HttpParser: FFI bindings to a C
# parser), which http.rb 4.x reads its responses with
# (http/response/parser.rb: `require "http-parser"`): neither FFI nor C
# extensions load in ruby.wasm. The gem's Ruby API as http.rb uses it
# (Parser.new_instance, Parser.new(obj), #parse, Instance#http_version,
# #http_status, #keep_alive?, #reset!, the Error classes and ERRORS) over a
# reader of our own: the bytes an instance has not used yet are kept; the
# head is read a line at a time (CRLF or LF), the status line and fields
# checked with regexps, each field name and value given to its callback
# whole; the body framed as the gem's build (http-parser 1.2.1, strict)
# frames responses. What http.rb sees is the gem's: the same status,
# fields, body bytes, keep-alive rule and errors (class, message); only
# where the data is cut into callback calls differs. Requests (type
# :request or :both) are not read: http.rb writes its own.
#
# Not the codec's parser: that one reads as Net::HTTP does (downcased field
# names, MRI's framing and errors), which is not what http.rb users get.

unless defined?(::HttpParser)
  module HttpParser
    # What follows is compiled when a constant of HttpParser is first used
    # (http.rb: HTTP::Response::Parser.new), so that a VM that never reads
    # with it does not pay for it at every start.
    SOURCE = <<'RUBY'
  module HttpParser
    HTTP_MAX_HEADER_SIZE = 80 * 1024

    class Error < StandardError; end
    %w[OK CALLBACK INVALID_EOF_STATE HEADER_OVERFLOW CLOSED_CONNECTION INVALID_VERSION INVALID_STATUS
       INVALID_METHOD INVALID_URL INVALID_HOST INVALID_PORT INVALID_PATH INVALID_QUERY_STRING INVALID_FRAGMENT
       LF_EXPECTED INVALID_HEADER_TOKEN INVALID_CONTENT_LENGTH INVALID_CHUNK_SIZE INVALID_CONSTANT
       INVALID_INTERNAL_STATE STRICT PAUSED UNKNOWN].each { |n| Error.const_set(n, Class.new(Error)) }

    # The errors a response can end in, as the gem names and describes them.
    DESCRIPTIONS = {
      INVALID_EOF_STATE: 'stream ended at an unexpected time',
      HEADER_OVERFLOW: 'too many header bytes seen; overflow detected',
      CLOSED_CONNECTION: 'data received after completed connection: close message',
      INVALID_VERSION: 'invalid HTTP version',
      INVALID_STATUS: 'invalid HTTP status code',
      INVALID_HEADER_TOKEN: 'invalid character in header',
      INVALID_CONTENT_LENGTH: 'invalid character in content-length header',
      UNEXPECTED_CONTENT_LENGTH: 'unexpected content-length header',
      INVALID_CHUNK_SIZE: 'invalid character in chunk size header',
      INVALID_CONSTANT: 'invalid constant string',
      STRICT: 'strict mode assertion failed',
      LF_EXPECTED: 'LF character expected',
    }
    CALLBACKS = %i[on_message_begin on_url on_status on_header_field on_header_value
                   on_headers_complete on_body on_message_complete on_chunk_header on_chunk_complete].freeze
    CALLBACKS.each { |c| DESCRIPTIONS[:"CB_#{c.to_s.delete_prefix('on_')}"] = "the #{c} callback failed" }
    DESCRIPTIONS.freeze

    ERRORS = { OK: Error::OK, UNKNOWN: Error::UNKNOWN }
    Error.constants.each { |n| ERRORS[n] = Error.const_get(n) unless n == :CALLBACK }
    CALLBACKS.each { |c| ERRORS[:"CB_#{c.to_s.delete_prefix('on_')}"] = Error::CALLBACK }
    ERRORS.freeze

    # Raised inside Instance#execute: the name of the error it stops at.
    class Stop < StandardError; end

    class Instance
      NO_LENGTH = nil
      # the status line, as far as it has come: its pieces in turn, each
      # optional only once those before it are whole
      STATUS_LINE = %r{\AH(?:T(?:T(?:P(?:/(?:(\d)(?:\.(?:(\d)(?:( +)(?:(\d+)(?:( )(.*))?)?)?)?)?)?)?)?)?)?}mn.freeze
      TOKEN = /\A[!#$%&'*+\-.^_`|~0-9A-Za-z]*/n.freeze

      attr_accessor :type
      attr_reader :http_major, :http_minor, :http_status

      def initialize(ptr = nil)
        raise ArgumentError, 'net-http-wasm: this HttpParser::Instance has no C struct to point to' if ptr
        @type = :both
        yield self if block_given?
        reset!
      end

      def reset!(new_type = type)
        @type = new_type
        @buf = +''.b
        @phase = :start
        @error = nil
        @http_major = @http_minor = @http_status = 0
        @upgrade = @chunked = @close = @keep_alive = @skip = false
        @length = NO_LENGTH
        nil
      end

      def http_version
        "#{@http_major}.#{@http_minor}"
      end

      def http_method
        nil
      end

      def upgrade?
        @upgrade
      end

      def error?
        !@error.nil?
      end

      def error
        @error && ERRORS.fetch(@error, Error::UNKNOWN).new("#{DESCRIPTIONS[@error]} (#{@error})")
      end

      def data
        nil
      end

      # HTTP/1.1 unless Connection: close, HTTP/1.0 only with keep-alive;
      # and never a body read to the end of the stream. (As the gem: a
      # version counts as 1.1 when both its digits are above 0.)
      def keep_alive?
        return false if @http_major > 0 && @http_minor > 0 ? @close : !@keep_alive
        !body_to_eof?
      end

      def final_chunk?
        @phase == :done
      end

      def stop!
        throw :return, 1
      end

      def error!
        throw :return, -1
      end

      # Reads data with the callbacks in cb; an empty String is the end of
      # the stream.
      def execute(cb, data)
        return if @error
        @cb = cb
        if data.empty?
          # (as the gem: at each end of the stream)
          return notify(:on_message_complete) if @phase == :to_eof
          stop(:INVALID_EOF_STATE) unless %i[start dead].include?(@phase)
          return
        end
        @buf << (data.encoding == Encoding::BINARY ? data : data.b)
        nil while step
      rescue Stop => e
        @error = e.message.to_sym
      ensure
        @buf = +''.b if @error
      end

      private

      def stop(name)
        raise Stop, name.to_s
      end

      # Takes what it can from the buffer: false once it needs more bytes.
      def step
        case @phase
        when :start, :dead
          @buf.sub!(/\A[\r\n]+/n, '')
          return false if @buf.empty?
          stop(:CLOSED_CONNECTION) if @phase == :dead
          # (as the gem: what framed the last message is gone, even when
          # these bytes do not start one)
          @length = NO_LENGTH
          @chunked = @close = @keep_alive = @skip = false
          stop(:INVALID_CONSTANT) unless @buf.start_with?('H')
          begin_message
        when :status, :fields, :trailer then head_line
        when :length then length_body
        when :to_eof
          body(@buf)
          @buf = +''.b
          false
        when :chunk_size then chunk_size
        when :chunk_data then chunk_data
        when :done then finish(:on_message_complete)
        when :upgraded
          # the rest is in another protocol: not for this parser
          @buf = +''.b
          @phase = :start
          false
        end
      end

      def begin_message
        @phase = :status
        @head_bytes = 0
        @conn_upgrade = @upgrade_field = false
        @field = nil
        notify(:on_message_begin)
        true
      end

      # One line of the head (or of the trailer): false until it is whole.
      def head_line
        lf = @buf.index(/[\r\n]/n)
        unless lf && (@buf.getbyte(lf) == 10 || lf + 1 < @buf.bytesize)
          check_partial(lf ? @buf.byteslice(0, lf) : @buf, lf)
          stop(:HEADER_OVERFLOW) if @head_bytes + @buf.bytesize > HTTP_MAX_HEADER_SIZE
          return false
        end
        line = @buf.byteslice(0, lf)
        ending = @buf.getbyte(lf) == 13 ? 2 : 1
        stop(:HEADER_OVERFLOW) if (@head_bytes += lf + ending) > HTTP_MAX_HEADER_SIZE
        bad_ending = ending == 2 && @buf.getbyte(lf + 1) != 10
        @buf = @buf.byteslice(lf + ending..)
        if @phase == :status
          status_line(line)
          stop(:STRICT) if bad_ending
        elsif line.empty?
          stop(:STRICT) if bad_ending
          framing(*@field) if @field
          return head_done
        elsif line.start_with?(' ', "\t") && @field
          # (as the gem: a folded value keeps the line's blanks, but for
          # the first piece of a value)
          if @value_empty
            # a value that starts on a folded line
            line = line.sub(/\A[ \t]+/n, '')
            check_value(@field[0], line)
            first_line(line)
            @value_empty = line.empty?
          else
            check_value(nil, line)
          end
          # (as the gem: a Connection value goes on through a folded line
          # only from where a token would start)
          @field[1] << line if @field[0].end_with?('connection') && connection(@field[1])
          deliver(:on_header_value, line)
          stop(:LF_EXPECTED) if bad_ending
        else
          field_line(line)
          stop(@value_empty ? :STRICT : :LF_EXPECTED) if bad_ending
        end
        true
      end

      # (as the gem: a bad byte is an error as soon as it arrives)
      def check_partial(line, ended)
        if @phase == :status
          status_error(line, ended)
        elsif !line.empty? && !(@field && line.start_with?(' ', "\t"))
          name = line[TOKEN]
          return if name.bytesize == line.bytesize && !ended
          stop(:INVALID_HEADER_TOKEN) if name.empty? || line.getbyte(name.bytesize) != 58
          value = line.byteslice(name.bytesize + 1..).sub(/\A[ \t]+/n, '')
          check_value(name.downcase, value)
          content_length(value, partial: true) if name.casecmp?('content-length')
        end
      end

      def status_error(line, whole)
        m = STATUS_LINE.match(line)
        n = m[0].bytesize
        # (as the gem: each as soon as it is read)
        @http_major = m[1].to_i if m[1]
        @http_minor = m[2].to_i if m[2]
        @http_status = m[4].to_i if m[4]
        stop(:INVALID_STATUS) if @http_status > 999
        return m if n == line.bytesize && (!whole || m[4])
        stop(n.zero? ? :INVALID_CONSTANT : n < 5 ? :STRICT : n < 8 || !m[3] ? :INVALID_VERSION : :INVALID_STATUS)
      end

      def status_line(line)
        m = status_error(line, true)
        deliver(:on_status, m[6] || +'')
        @phase = :fields
      end

      def field_line(line)
        name = line[TOKEN]
        stop(:INVALID_HEADER_TOKEN) if name.empty? || line.getbyte(name.bytesize) != 58
        value = line.byteslice(name.bytesize + 1..).sub(/\A[ \t]+/n, '')
        deliver(:on_header_field, name)
        check_value(name.downcase, value)
        framing(*@field) if @field
        # (its framing once its folded lines, if any, are in; but for a
        # Content-Length, which they do not change)
        @field = [name.downcase, value]
        @value_empty = value.empty?
        first_line(value)
        deliver(:on_header_value, value)
      end

      # (as the gem: the strict build refuses a control byte in a value, but
      # for the first; in other fields than these, it looks at the second
      # only, and in a Transfer-Encoding, at those up to the first that is
      # not "chunked" and spaces, and at the one after. The gem also looks
      # at a value's byte that starts the data of a parse call, which
      # depends on how the stream was cut: not kept.)
      CHECKED = %w[connection proxy-connection content-length].freeze
      CTL = /[\x00-\x08\x0a-\x1f\x7f]/n.freeze

      def check_value(name, value)
        bad = value.index(CTL, 1) or return
        checked = if CHECKED.include?(name) then bad
                  elsif name == 'transfer-encoding' then value.downcase.match(/\A(?:c(?:h(?:u(?:n(?:k(?:e(?:d *)?)?)?)?)?)?)?/n)[0].bytesize + 1
                  else 1
                  end
        return if bad > checked
        # a Content-Length already wrong before it
        stop(:INVALID_CONTENT_LENGTH) if name == 'content-length' && value[/\A(?:\d+ *)?/n].bytesize < bad
        stop(:INVALID_HEADER_TOKEN)
      end

      # (partial: a line not yet whole, checked for what is wrong already)
      def content_length(value, partial: false)
        return if value.empty?
        stop(:INVALID_CONTENT_LENGTH) unless value.match?(/\A\d/n)
        stop(:UNEXPECTED_CONTENT_LENGTH) if @length
        stop(:INVALID_CONTENT_LENGTH) unless value.match?(/\A\d+ *\z/n)
        stop(:INVALID_CONTENT_LENGTH) if value.to_i >= 2**64 - 1
        @length = value.to_i unless partial
      end

      # The fields that frame the body or say what becomes of the connection.
      def framing(name, value)
        case name
        when 'connection', 'proxy-connection' then connection(value)
        when 'upgrade'
          @upgrade_field = true unless value.empty?
        end
      end

      WORDS = { 'k' => 'keep-alive', 'c' => 'close', 'u' => 'upgrade' }.freeze
      TCHAR = /\A[!#$%&'*+\-.^_`|~0-9A-Za-z]/n.freeze

      # What the first line of a value sets (not a folded one).
      def first_line(value)
        content_length(value) if @field[0] == 'content-length'
        @chunked = true if @field[0] == 'transfer-encoding' && value.match?(/\Achunked *\z/in)
      end

      # Connection's tokens, as the gem reads them: true if the value ends
      # where a token would start.
      def connection(value)
        rest = value
        first = true
        while true
          rest = rest.sub(/\A[ \t]+/n, '')
          return true if rest.empty?
          # (a token after a comma that starts with a byte no token may
          # hold ends the reading of the field)
          return false unless first || rest.match?(TCHAR)
          token, comma, rest = rest.partition(',')
          word = WORDS[token[0].to_s.downcase]
          t = token.downcase
          # (the value's first byte is taken into the token, even a comma)
          if (first && token.empty?) || (word && comma == ',' && t.size < word.size && word.start_with?(t))
            # (the start of a word, then a comma: the comma is taken into
            # the token, which runs on to the next)
            _, comma, rest = rest.partition(',')
          elsif word && t.sub(/ +\z/n, '') == word
            case word
            when 'keep-alive' then @keep_alive = true
            when 'close' then @close = true
            else @conn_upgrade = true
            end
          end
          return false if comma.empty?
          first = false
        end
      end

      def head_done
        if @phase == :trailer
          @phase = :done
          return true
        end
        stop(:UNEXPECTED_CONTENT_LENGTH) if @chunked && @length
        @upgrade = @upgrade_field && @conn_upgrade && @http_status == 101
        # on_headers_complete's stop! is the gem's way to skip a HEAD
        # response's body
        @skip = notify(:on_headers_complete, skippable: true)
        body = @chunked || @length.to_i > 0
        @phase = if @upgrade && (@skip || !body) then :upgrade_done
                 elsif @skip || (!@chunked && (@length == 0 || (@length.nil? && !body_to_eof?))) then :done
                 elsif @chunked then :chunk_size
                 elsif @length then :length
                 else :to_eof
                 end
        if @phase == :upgrade_done
          finish(:on_message_complete)
          @phase = :upgraded
        end
        true
      end

      def body_to_eof?
        s = @http_status
        !(s / 100 == 1 || s == 204 || s == 304 || @skip || @chunked || @length)
      end

      def length_body
        return false if @buf.empty?
        piece = @buf.byteslice(0, @length)
        @buf = @buf.byteslice(piece.bytesize..)
        @length -= piece.bytesize
        body(piece)
        @phase = :done if @length.zero?
        true
      end

      def chunk_size
        return false if @buf.empty?
        # hex digits, then after a space or ';' anything up to the CR
        line = @buf[/\A[^\r]*/n]
        stop(:INVALID_CHUNK_SIZE) unless line.match?(/\A\h+(?:[; ].*)?\z/mn)
        return false if line.bytesize + 2 > @buf.bytesize
        stop(:STRICT) unless @buf.getbyte(line.bytesize + 1) == 10
        size = line[/\A\h+/n].to_i(16)
        stop(:INVALID_CONTENT_LENGTH) if size >= 2**64 - 16
        @buf = @buf.byteslice(line.bytesize + 2..)
        if size.zero?
          @phase = :trailer
        else
          @length = size
          @phase = :chunk_data
        end
        true
      end

      def chunk_data
        if @length > 0
          return false if @buf.empty?
          piece = @buf.byteslice(0, @length)
          @buf = @buf.byteslice(piece.bytesize..)
          @length -= piece.bytesize
          body(piece)
          return true
        end
        return false if @buf.empty?
        stop(:STRICT) unless @buf.getbyte(0) == 13
        return false if @buf.bytesize < 2
        stop(:STRICT) unless @buf.getbyte(1) == 10
        @buf = @buf.byteslice(2..)
        @phase = :chunk_size
        true
      end

      def finish(name)
        @phase = keep_alive? ? :start : :dead
        notify(name)
        true
      end

      def body(piece)
        deliver(:on_body, piece) unless piece.empty?
      end

      # A callback: false if it is not set or it returned; stop! is an
      # error but in on_headers_complete (skippable), where it is true.
      def notify(name, skippable: false)
        f = @cb[name] or return false
        r = f.call(self)
        return false if r.zero?
        return true if skippable && r == 1
        stop(:"CB_#{name.to_s.delete_prefix('on_')}")
      end

      def deliver(name, piece)
        f = @cb[name] or return
        stop(:"CB_#{name.to_s.delete_prefix('on_')}") unless f.call(self, piece.b).zero?
      end
    end

    # The gem's HttpParser::Parser: callbacks by name, from an object's
    # methods or from blocks, and #parse.
    class Parser
      def self.new_instance(&block)
        Instance.new(&block)
      end

      def initialize(callback_obj = nil)
        @settings = {}
        CALLBACKS.each do |c|
          __send__(c, &callback_obj.method(c)) if callback_obj&.respond_to?(c)
        end
        yield self if block_given?
      end

      CALLBACKS.each do |name|
        # (as the gem: on_chunk_header and on_chunk_complete take the place
        # of on_message_complete)
        key = name.start_with?('on_chunk') ? :on_message_complete : name
        define_method(name) { |&block| @settings[key] = wrap(block) }
      end

      # Reads data; true if the instance is in error (the gem's value, which
      # its documentation states the other way round). As the gem, it takes
      # String#length bytes of data.
      def parse(inst, data)
        unless inst.type == :response
          raise NotImplementedError, 'net-http-wasm: HttpParser in ruby.wasm reads responses only (type = :response)'
        end
        n = data.length
        inst.execute(@settings, n == data.bytesize ? data : data.byteslice(0, n))
        inst.error?
      end

      private

      # A callback's value: 0, or 1 for stop!, -1 for error! or an exception
      # (which is not seen again).
      def wrap(block)
        lambda do |*args|
          catch(:return) do
            block.call(*args)
            0
          end
        rescue StandardError
          -1
        end
      end
    end
  end
RUBY

    def self.const_missing(name)
      singleton_class.send(:remove_method, :const_missing)
      TOPLEVEL_BINDING.eval(SOURCE, 'net_http_wasm/http_parser.rb', 27)
      const_get(name)
    end
  end

  # `require "http-parser"` now finds it loaded.
  NetHttpWasm.mark_loaded('http-parser') if defined?(NetHttpWasm.mark_loaded) # (natively: the tests load this file beside the gem)
end
