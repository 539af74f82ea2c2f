# frozen_string_literal: true
#
# A stand-in for the http-parser gem (HttpParser: FFI bindings to
# nodejs/http-parser, a C library), which http.rb 4.x reads its responses
# with (http/response/parser.rb: `require "http-parser"`): neither FFI nor C
# extensions load in ruby.wasm. The same Ruby API (HttpParser::Parser,
# ::Instance, ::Error and its subclasses, ERRORS) over a Ruby reading of
# responses that behaves as the library does in the gem's build (http-parser
# 1.2.1, as Debian ships it: http_parser 2.8.1 at commit 77310ee, strict):
# the same callbacks with the same pieces of data at the same split points,
# the same flags, keep-alive rule, errors (name, description) and quirks of
# the gem's bindings (noted where they are kept). Requests (type :request
# or :both) are not read: http.rb writes its own.
#
# Not the codec's parser: that one reads as Net::HTTP does (downcased field
# names, MRI's framing and errors), which is not what http.rb users get.

unless defined?(::HttpParser)
  module HttpParser
    # What follows is compiled when a constant of HttpParser is first used
    # (http.rb: HTTP::Response::Parser.new): compiling it takes ruby.wasm
    # 4.0 about 100 ms, which a VM that never reads with it would pay at
    # every start.
    SOURCE = <<'RUBY'
  module HttpParser
    HTTP_MAX_HEADER_SIZE = 80 * 1024

    class Error < StandardError
      class OK < Error; end
      class CALLBACK < Error; end
      class INVALID_EOF_STATE < Error; end
      class HEADER_OVERFLOW < Error; end
      class CLOSED_CONNECTION < Error; end
      class INVALID_VERSION < Error; end
      class INVALID_STATUS < Error; end
      class INVALID_METHOD < Error; end
      class INVALID_URL < Error; end
      class INVALID_HOST < Error; end
      class INVALID_PORT < Error; end
      class INVALID_PATH < Error; end
      class INVALID_QUERY_STRING < Error; end
      class INVALID_FRAGMENT < Error; end
      class LF_EXPECTED < Error; end
      class INVALID_HEADER_TOKEN < Error; end
      class INVALID_CONTENT_LENGTH < Error; end
      class INVALID_CHUNK_SIZE < Error; end
      class INVALID_CONSTANT < Error; end
      class INVALID_INTERNAL_STATE < Error; end
      class STRICT < Error; end
      class PAUSED < Error; end
      class UNKNOWN < Error; end
    end

    # The library's errno values, in its order: [name, description].
    ERRNO = [
      %w[OK success],
      ['CB_message_begin', 'the on_message_begin callback failed'],
      ['CB_url', 'the on_url callback failed'],
      ['CB_header_field', 'the on_header_field callback failed'],
      ['CB_header_value', 'the on_header_value callback failed'],
      ['CB_headers_complete', 'the on_headers_complete callback failed'],
      ['CB_body', 'the on_body callback failed'],
      ['CB_message_complete', 'the on_message_complete callback failed'],
      ['CB_status', 'the on_status callback failed'],
      ['CB_chunk_header', 'the on_chunk_header callback failed'],
      ['CB_chunk_complete', 'the on_chunk_complete callback failed'],
      ['INVALID_EOF_STATE', 'stream ended at an unexpected time'],
      ['HEADER_OVERFLOW', 'too many header bytes seen; overflow detected'],
      ['CLOSED_CONNECTION', 'data received after completed connection: close message'],
      ['INVALID_VERSION', 'invalid HTTP version'],
      ['INVALID_STATUS', 'invalid HTTP status code'],
      ['INVALID_METHOD', 'invalid HTTP method'],
      ['INVALID_URL', 'invalid URL'],
      ['INVALID_HOST', 'invalid host'],
      ['INVALID_PORT', 'invalid port'],
      ['INVALID_PATH', 'invalid path'],
      ['INVALID_QUERY_STRING', 'invalid query string'],
      ['INVALID_FRAGMENT', 'invalid fragment'],
      ['LF_EXPECTED', 'LF character expected'],
      ['INVALID_HEADER_TOKEN', 'invalid character in header'],
      ['INVALID_CONTENT_LENGTH', 'invalid character in content-length header'],
      ['UNEXPECTED_CONTENT_LENGTH', 'unexpected content-length header'],
      ['INVALID_CHUNK_SIZE', 'invalid character in chunk size header'],
      ['INVALID_CONSTANT', 'invalid constant string'],
      ['INVALID_INTERNAL_STATE', 'encountered unexpected internal state'],
      ['STRICT', 'strict mode assertion failed'],
      ['PAUSED', 'parser is paused'],
      ['UNKNOWN', 'an unknown error occurred'],
    ].freeze
    ERRNO.each_with_index { |(name, _), i| const_set(:"HPE_#{name}", i) }

    # (the gem's table: it has no UNEXPECTED_CONTENT_LENGTH, which is then an UNKNOWN)
    ERRORS = {
      OK: Error::OK,
      CB_message_begin: Error::CALLBACK, CB_url: Error::CALLBACK, CB_header_field: Error::CALLBACK,
      CB_header_value: Error::CALLBACK, CB_headers_complete: Error::CALLBACK, CB_body: Error::CALLBACK,
      CB_message_complete: Error::CALLBACK, CB_status: Error::CALLBACK, CB_chunk_header: Error::CALLBACK,
      CB_chunk_complete: Error::CALLBACK,
      INVALID_EOF_STATE: Error::INVALID_EOF_STATE, HEADER_OVERFLOW: Error::HEADER_OVERFLOW,
      CLOSED_CONNECTION: Error::CLOSED_CONNECTION, INVALID_VERSION: Error::INVALID_VERSION,
      INVALID_STATUS: Error::INVALID_STATUS, INVALID_METHOD: Error::INVALID_METHOD,
      INVALID_URL: Error::INVALID_URL, INVALID_HOST: Error::INVALID_HOST, INVALID_PORT: Error::INVALID_PORT,
      INVALID_PATH: Error::INVALID_PATH, INVALID_QUERY_STRING: Error::INVALID_QUERY_STRING,
      INVALID_FRAGMENT: Error::INVALID_FRAGMENT, LF_EXPECTED: Error::LF_EXPECTED,
      INVALID_HEADER_TOKEN: Error::INVALID_HEADER_TOKEN, INVALID_CONTENT_LENGTH: Error::INVALID_CONTENT_LENGTH,
      INVALID_CHUNK_SIZE: Error::INVALID_CHUNK_SIZE, INVALID_CONSTANT: Error::INVALID_CONSTANT,
      INVALID_INTERNAL_STATE: Error::INVALID_INTERNAL_STATE, STRICT: Error::STRICT, PAUSED: Error::PAUSED,
      UNKNOWN: Error::UNKNOWN,
    }.freeze

    TYPES = { request: 0, response: 1, both: 2 }.freeze
    # (the gem's names, shifted by the type's two bits: Instance#flags)
    FLAG = { CHUNKED: 1 << 2, CONNECTION_KEEP_ALIVE: 1 << 3, CONNECTION_CLOSE: 1 << 4, CONNECTION_UPGRADE: 1 << 5,
             TRAILING: 1 << 6, UPGRADE: 1 << 7, SKIPBODY: 1 << 8 }.freeze
    METHODS = %i[DELETE GET HEAD POST PUT CONNECT OPTIONS TRACE COPY LOCK MKCOL MOVE PROPFIND PROPPATCH SEARCH
                 UNLOCK BIND REBIND UNBIND ACL REPORT MKACTIVITY CHECKOUT MERGE MSEARCH NOTIFY SUBSCRIBE
                 UNSUBSCRIBE PATCH PURGE MKCALENDAR LINK UNLINK].freeze

    # The state of one message being read (the library's struct http_parser).
    class Instance
      F_CHUNKED = 1 << 0
      F_CONNECTION_KEEP_ALIVE = 1 << 1
      F_CONNECTION_CLOSE = 1 << 2
      F_CONNECTION_UPGRADE = 1 << 3
      F_TRAILING = 1 << 4
      F_UPGRADE = 1 << 5
      F_SKIPBODY = 1 << 6
      F_CONTENTLENGTH = 1 << 7
      NO_LENGTH = (1 << 64) - 1
      CR = 13
      LF = 10
      # tchar: the bytes a field name may have (the library's tokens[])
      TOKEN = Array.new(256) { |b| b < 128 && '!#$%&\'*+-.^_`|~'.include?(b.chr) || (48..57).cover?(b) || (65..90).cover?(b) || (97..122).cover?(b) }.freeze
      NOT_TOKEN = /[^!\#$%&'*+\-.^_`|~0-9A-Za-z]/n.freeze
      LINE_END = /[\r\n]/n.freeze
      UNHEX = Array.new(256) { |b| (b.chr =~ /\A\h\z/n) ? b.chr.to_i(16) : -1 }.freeze
      # the states that count toward HTTP_MAX_HEADER_SIZE: all but the body's
      BODY_STATES = %i[chunk_data chunk_data_almost_done chunk_data_done body_identity body_identity_eof message_done].freeze
      # field names the parser acts on, lowercased
      SPECIAL = { 'connection' => :connection, 'proxy-connection' => :connection, 'content-length' => :content_length,
                  'transfer-encoding' => :transfer_encoding, 'upgrade' => :upgrade }.freeze
      KEEP_ALIVE = 'keep-alive'.b.bytes.freeze
      CLOSE = 'close'.b.bytes.freeze
      UPGRADE = 'upgrade'.b.bytes.freeze
      CHUNKED = 'chunked'.b.bytes.freeze

      def initialize(ptr = nil)
        raise ArgumentError, 'net-http-wasm: this HttpParser::Instance has no C struct to point to' if ptr
        @type = TYPES[:both]
        @flags = 0
        yield self if block_given?
        init(@type)
      end

      def reset!(new_type = type)
        init(new_type.is_a?(Symbol) ? TYPES.fetch(new_type) : new_type)
      end

      def type
        TYPES.key(@type & 3)
      end

      # (as the gem: ORed into the flags' byte)
      def type=(new_type)
        @type = ((@flags << 2) & 0xfc | TYPES.fetch(new_type)) & 3
      end

      # The gem reads the first six flags, above the type's two bits.
      def flags
        (@flags << 2) & 0xfc
      end

      attr_reader :http_major, :http_minor

      def http_version
        format('%d.%d', @http_major, @http_minor)
      end

      def http_status
        @status_code
      end

      def http_method
        METHODS[@method]
      end

      def upgrade?
        @upgrade
      end

      def error?
        @errno != 0
      end

      def error
        return nil if @errno == 0
        name, desc = ERRNO[@errno]
        (ERRORS[name.to_sym] || Error::UNKNOWN).new("#{desc} (#{name})")
      end

      def data
        nil
      end

      def keep_alive?
        if @http_major > 0 && @http_minor > 0
          return false if @flags & F_CONNECTION_CLOSE != 0
        elsif @flags & F_CONNECTION_KEEP_ALIVE == 0
          return false
        end
        !needs_eof?
      end

      def final_chunk?
        @state == :message_done
      end

      def stop!
        throw :return, 1
      end

      def error!
        throw :return, -1
      end

      # The struct's fields the gem's layout names, where they mean the same.
      def [](field)
        case field
        when :type_flags then ((@flags << 2) & 0xfc) | @type
        when :nread then @nread
        when :content_length then @content_length
        when :http_major then @http_major
        when :http_minor then @http_minor
        when :status_code then @status_code
        when :method then @method
        when :error_upgrade then @errno | (@upgrade ? 0x80 : 0)
        else raise ArgumentError, "No such field '#{field}'"
        end
      end

      # http_parser_execute over a response: the bytes taken (all of them
      # unless an error or an upgrade stopped it); an empty String is the end
      # of the stream.
      def execute(settings, data)
        return 0 if @errno != 0
        data = data.b unless data.encoding == Encoding::BINARY
        len = data.bytesize
        if len == 0
          case @state
          when :body_identity_eof
            notify(settings, :on_message_complete, HPE_CB_message_complete)
            return 0
          when :dead, :start_res
            return 0
          else
            @errno = HPE_INVALID_EOF_STATE
            return 1
          end
        end

        field_mark = @state == :header_field ? 0 : nil
        value_mark = @state == :header_value ? 0 : nil
        status_mark = @state == :res_status ? 0 : nil
        body_mark = nil
        p = 0
        while p < len
          ch = data.getbyte(p)
          if !BODY_STATES.include?(@state) && (@nread += 1) > HTTP_MAX_HEADER_SIZE
            return error_at(HPE_HEADER_OVERFLOW, p)
          end

          # each `next` here is the library's REEXECUTE: the same byte again
          while true
            case @state
            when :dead
              # after a message with Connection: close
              break if ch == CR || ch == LF
              return error_at(HPE_CLOSED_CONNECTION, p)

            when :start_res
              break if ch == CR || ch == LF
              @flags = 0
              @content_length = NO_LENGTH
              return error_at(HPE_INVALID_CONSTANT, p) if ch != 72 # H
              @state = :res_H
              return p + 1 if notify(settings, :on_message_begin, HPE_CB_message_begin)
              break

            when :res_H
              return error_at(HPE_STRICT, p) if ch != 84 # T
              @state = :res_HT
              break
            when :res_HT
              return error_at(HPE_STRICT, p) if ch != 84 # T
              @state = :res_HTT
              break
            when :res_HTT
              return error_at(HPE_STRICT, p) if ch != 80 # P
              @state = :res_HTTP
              break
            when :res_HTTP
              return error_at(HPE_STRICT, p) if ch != 47 # /
              @state = :res_http_major
              break

            when :res_http_major
              return error_at(HPE_INVALID_VERSION, p) unless ch >= 48 && ch <= 57
              @http_major = ch - 48
              @state = :res_http_dot
              break
            when :res_http_dot
              return error_at(HPE_INVALID_VERSION, p) if ch != 46 # .
              @state = :res_http_minor
              break
            when :res_http_minor
              return error_at(HPE_INVALID_VERSION, p) unless ch >= 48 && ch <= 57
              @http_minor = ch - 48
              @state = :res_http_end
              break
            when :res_http_end
              return error_at(HPE_INVALID_VERSION, p) if ch != 32
              @state = :res_first_status_code
              break

            when :res_first_status_code
              if ch >= 48 && ch <= 57
                @status_code = ch - 48
                @state = :res_status_code
                break
              end
              break if ch == 32
              return error_at(HPE_INVALID_STATUS, p)
            when :res_status_code
              if ch >= 48 && ch <= 57
                @status_code = @status_code * 10 + ch - 48
                return error_at(HPE_INVALID_STATUS, p) if @status_code > 999
                break
              end
              if ch == 32
                @state = :res_status_start
                break
              end
              return error_at(HPE_INVALID_STATUS, p) unless ch == CR || ch == LF
              @state = :res_status_start
              next
            when :res_status_start
              status_mark ||= p
              @state = :res_status
              @index = 0
              next if ch == CR || ch == LF
              break
            when :res_status
              if ch == CR || ch == LF
                @state = ch == CR ? :res_line_almost_done : :header_field_start
                if status_mark
                  return p + 1 if data_cb(settings, :on_status, HPE_CB_status, data, status_mark, p - status_mark)
                  status_mark = nil
                end
              end
              break
            when :res_line_almost_done
              return error_at(HPE_STRICT, p) if ch != LF
              @state = :header_field_start
              break

            when :header_field_start
              if ch == CR
                @state = :headers_almost_done
                break
              end
              if ch == LF
                @state = :headers_almost_done
                next
              end
              return error_at(HPE_INVALID_HEADER_TOKEN, p) unless TOKEN[ch]
              field_mark ||= p
              @index = 0
              @state = :header_field
              @name = ch.chr.downcase
              break

            when :header_field
              q = data.index(NOT_TOKEN, p) || len
              @name << data.byteslice(p, q - p).downcase if @name.bytesize < 18
              if q == len
                # (the library counts one byte less here)
                q = len - 1
                return error_at(HPE_HEADER_OVERFLOW, q) if (@nread += q - p) > HTTP_MAX_HEADER_SIZE
                p = q
                break
              end
              return error_at(HPE_HEADER_OVERFLOW, q) if (@nread += q - p) > HTTP_MAX_HEADER_SIZE
              p = q
              ch = data.getbyte(p)
              return error_at(HPE_INVALID_HEADER_TOKEN, p) if ch != 58 # :
              @header_state = SPECIAL[@name] || :general
              @state = :header_value_discard_ws
              if field_mark
                return p + 1 if data_cb(settings, :on_header_field, HPE_CB_header_field, data, field_mark, p - field_mark)
                field_mark = nil
              end
              break

            when :header_value_discard_ws, :header_value_start
              if @state == :header_value_discard_ws
                break if ch == 32 || ch == 9
                if ch == CR
                  @state = :header_value_discard_ws_almost_done
                  break
                end
                if ch == LF
                  @state = :header_value_discard_lws
                  break
                end
              end
              value_mark ||= p
              @state = :header_value
              @index = 0
              c = ch | 0x20
              case @header_state
              when :upgrade
                @flags |= F_UPGRADE
                @header_state = :general
              when :transfer_encoding
                @header_state = c == 99 ? :matching_transfer_encoding_chunked : :general # c
              when :content_length
                return error_at(HPE_INVALID_CONTENT_LENGTH, p) unless ch >= 48 && ch <= 57
                return error_at(HPE_UNEXPECTED_CONTENT_LENGTH, p) if @flags & F_CONTENTLENGTH != 0
                @flags |= F_CONTENTLENGTH
                @content_length = ch - 48
                @header_state = :content_length_num
              when :connection
                @header_state = case c
                                when 107 then :matching_connection_keep_alive # k
                                when 99 then :matching_connection_close # c
                                when 117 then :matching_connection_upgrade # u
                                else :matching_connection_token
                                end
              when :matching_connection_token_start
                nil
              else
                @header_state = :general
              end
              break

            when :header_value
              start = p
              h = @header_state
              line_end = nil
              while p < len
                ch = data.getbyte(p)
                if ch == CR || ch == LF
                  line_end = ch
                  break
                end
                return error_at(HPE_INVALID_HEADER_TOKEN, p) unless ch > 31 && ch != 127 || ch == 9
                if h == :general
                  # on to the line's end: the bytes between are not checked
                  q = data.index(LINE_END, p)
                  p = q.nil? || q - p >= HTTP_MAX_HEADER_SIZE ? len : q
                  next
                end
                h = value_byte(h, ch, ch | 0x20)
                if h.is_a?(Integer)
                  @header_state = :content_length_num
                  return error_at(h, p)
                end
                p += 1
              end
              @header_state = h
              if line_end == LF
                @state = :header_almost_done
                return error_at(HPE_HEADER_OVERFLOW, p) if (@nread += p - start) > HTTP_MAX_HEADER_SIZE
                if value_mark
                  return p if data_cb(settings, :on_header_value, HPE_CB_header_value, data, value_mark, p - value_mark)
                  value_mark = nil
                end
                next
              end
              if line_end == CR
                @state = :header_almost_done
                if value_mark
                  return p + 1 if data_cb(settings, :on_header_value, HPE_CB_header_value, data, value_mark, p - value_mark)
                  value_mark = nil
                end
              end
              p -= 1 if p == len
              return error_at(HPE_HEADER_OVERFLOW, p) if (@nread += p - start) > HTTP_MAX_HEADER_SIZE
              break

            when :header_almost_done
              return error_at(HPE_LF_EXPECTED, p) if ch != LF
              @state = :header_value_lws
              break

            when :header_value_lws
              if ch == 32 || ch == 9
                @state = :header_value_start
                next
              end
              header_done_flags
              @state = :header_field_start
              next

            when :header_value_discard_ws_almost_done
              return error_at(HPE_STRICT, p) if ch != LF
              @state = :header_value_discard_lws
              break

            when :header_value_discard_lws
              if ch == 32 || ch == 9
                @state = :header_value_discard_ws
                break
              end
              header_done_flags
              # an empty value
              value_mark ||= p
              @state = :header_field_start
              return p if data_cb(settings, :on_header_value, HPE_CB_header_value, data, value_mark, p - value_mark)
              value_mark = nil
              next

            when :headers_almost_done
              return error_at(HPE_STRICT, p) if ch != LF
              if @flags & F_TRAILING != 0
                # the end of a chunked body (on_chunk_complete: the gem never sets it)
                @state = :message_done
                next
              end
              return error_at(HPE_UNEXPECTED_CONTENT_LENGTH, p) if @flags & F_CHUNKED != 0 && @flags & F_CONTENTLENGTH != 0
              @state = :headers_done
              # a response's Upgrade counts only with a 101 (and Connection: upgrade)
              @upgrade = @flags & F_UPGRADE != 0 && @flags & F_CONNECTION_UPGRADE != 0 ? @status_code == 101 : @method == 5
              if (f = settings[:on_headers_complete])
                case f.call(self)
                when 0 then nil
                when 1 then @flags |= F_SKIPBODY
                when 2
                  @upgrade = true
                  @flags |= F_SKIPBODY
                else
                  @errno = HPE_CB_headers_complete
                  return p
                end
              end
              next

            when :headers_done
              return error_at(HPE_STRICT, p) if ch != LF
              @nread = 0
              has_body = @flags & F_CHUNKED != 0 || (@content_length > 0 && @content_length != NO_LENGTH)
              if @upgrade && (@method == 5 || @flags & F_SKIPBODY != 0 || !has_body)
                # the rest is in another protocol
                @state = new_message
                return p + 1 if notify(settings, :on_message_complete, HPE_CB_message_complete)
                return p + 1
              end
              if @flags & F_SKIPBODY != 0
                @state = new_message
                return p + 1 if notify(settings, :on_message_complete, HPE_CB_message_complete)
              elsif @flags & F_CHUNKED != 0
                @state = :chunk_size_start
              elsif @content_length == 0
                @state = new_message
                return p + 1 if notify(settings, :on_message_complete, HPE_CB_message_complete)
              elsif @content_length != NO_LENGTH
                @state = :body_identity
              elsif !needs_eof?
                @state = new_message
                return p + 1 if notify(settings, :on_message_complete, HPE_CB_message_complete)
              else
                @state = :body_identity_eof
              end
              break

            when :body_identity
              n = len - p
              n = @content_length if @content_length < n
              body_mark ||= p
              @content_length -= n
              p += n - 1
              if @content_length == 0
                @state = :message_done
                return p if data_cb(settings, :on_body, HPE_CB_body, data, body_mark, p - body_mark + 1)
                body_mark = nil
                next
              end
              break

            when :body_identity_eof
              body_mark ||= p
              p = len - 1
              break

            when :message_done
              @state = new_message
              return p + 1 if notify(settings, :on_message_complete, HPE_CB_message_complete)
              return p + 1 if @upgrade
              break

            when :chunk_size_start
              v = UNHEX[ch]
              return error_at(HPE_INVALID_CHUNK_SIZE, p) if v < 0
              @content_length = v
              @state = :chunk_size
              break
            when :chunk_size
              if ch == CR
                @state = :chunk_size_almost_done
                break
              end
              v = UNHEX[ch]
              if v < 0
                return error_at(HPE_INVALID_CHUNK_SIZE, p) unless ch == 59 || ch == 32 # ; or SP
                @state = :chunk_parameters
                break
              end
              return error_at(HPE_INVALID_CONTENT_LENGTH, p) if (NO_LENGTH - 16) / 16 < @content_length
              @content_length = @content_length * 16 + v
              break
            when :chunk_parameters
              @state = :chunk_size_almost_done if ch == CR
              break
            when :chunk_size_almost_done
              return error_at(HPE_STRICT, p) if ch != LF
              @nread = 0
              if @content_length == 0
                @flags |= F_TRAILING
                @state = :header_field_start
              else
                @state = :chunk_data
              end
              # (on_chunk_header: the gem never sets it)
              break

            when :chunk_data
              n = len - p
              n = @content_length if @content_length < n
              body_mark ||= p
              @content_length -= n
              p += n - 1
              @state = :chunk_data_almost_done if @content_length == 0
              break
            when :chunk_data_almost_done
              return error_at(HPE_STRICT, p) if ch != CR
              @state = :chunk_data_done
              if body_mark
                return p + 1 if data_cb(settings, :on_body, HPE_CB_body, data, body_mark, p - body_mark)
                body_mark = nil
              end
              break
            when :chunk_data_done
              return error_at(HPE_STRICT, p) if ch != LF
              @nread = 0
              @state = :chunk_size_start
              break

            else
              return error_at(HPE_INVALID_INTERNAL_STATE, p)
            end
          end
          p += 1
        end

        # what a mark holds as the bytes run out (one mark at most)
        mark = field_mark || value_mark || body_mark || status_mark
        if mark
          name, errno = if field_mark then [:on_header_field, HPE_CB_header_field]
                        elsif value_mark then [:on_header_value, HPE_CB_header_value]
                        elsif body_mark then [:on_body, HPE_CB_body]
                        else [:on_status, HPE_CB_status]
                        end
          data_cb(settings, name, errno, data, mark, len - mark)
        end
        len
      end

      private

      def init(type)
        @type = type & 3
        @state = @type == TYPES[:response] ? :start_res : :start_other
        @flags = 0
        @header_state = :general
        @index = 0
        @nread = 0
        @content_length = 0
        @http_major = 0
        @http_minor = 0
        @status_code = 0
        @method = 0
        @errno = 0
        @upgrade = false
        @name = +''
        nil
      end

      def error_at(errno, consumed)
        @errno = errno
        consumed
      end

      # Whether the body runs to the end of the stream.
      def needs_eof?
        return false if @status_code / 100 == 1 || @status_code == 204 || @status_code == 304 || @flags & F_SKIPBODY != 0
        return false if @flags & F_CHUNKED != 0 || @content_length != NO_LENGTH
        true
      end

      # (the strict build: after a message that does not keep the
      # connection alive, only CR and LF may follow)
      def new_message
        keep_alive? ? :start_res : :dead
      end

      # A header's line ended: the flags its value set.
      def header_done_flags
        case @header_state
        when :connection_keep_alive then @flags |= F_CONNECTION_KEEP_ALIVE
        when :connection_close then @flags |= F_CONNECTION_CLOSE
        when :transfer_encoding_chunked then @flags |= F_CHUNKED
        when :connection_upgrade then @flags |= F_CONNECTION_UPGRADE
        end
      end

      # One byte of the value of a header the parser acts on: the next
      # header state, or an errno.
      def value_byte(h, ch, c)
        case h
        when :content_length_num
          return :content_length_ws if ch == 32
          return HPE_INVALID_CONTENT_LENGTH unless ch >= 48 && ch <= 57
          return HPE_INVALID_CONTENT_LENGTH if (NO_LENGTH - 10) / 10 < @content_length
          @content_length = @content_length * 10 + ch - 48
          h
        when :content_length_ws
          ch == 32 ? h : HPE_INVALID_CONTENT_LENGTH
        when :matching_transfer_encoding_chunked
          match(h, c, CHUNKED, :transfer_encoding_chunked, :general)
        when :matching_connection_token_start
          case c
          when 107 then :matching_connection_keep_alive
          when 99 then :matching_connection_close
          when 117 then :matching_connection_upgrade
          else
            if TOKEN[c] then :matching_connection_token
            elsif c == 32 || c == 9 then h
            else :general
            end
          end
        when :matching_connection_keep_alive
          match(h, c, KEEP_ALIVE, :connection_keep_alive, :matching_connection_token)
        when :matching_connection_close
          match(h, c, CLOSE, :connection_close, :matching_connection_token)
        when :matching_connection_upgrade
          match(h, c, UPGRADE, :connection_upgrade, :matching_connection_token)
        when :matching_connection_token
          if ch == 44 # ,
            @index = 0
            return :matching_connection_token_start
          end
          h
        when :transfer_encoding_chunked
          ch == 32 ? h : :general
        when :connection_keep_alive, :connection_close, :connection_upgrade
          if ch == 44
            header_done_flags_for(h)
            @index = 0
            :matching_connection_token_start
          elsif ch != 32
            :matching_connection_token
          else
            h
          end
        else
          :general
        end
      end

      def header_done_flags_for(h)
        @header_state = h
        header_done_flags
      end

      def match(h, c, word, matched, otherwise)
        @index += 1
        return otherwise if @index > word.size - 1 || c != word[@index]
        @index == word.size - 1 ? matched : h
      end

      # A notification callback: true if it failed (then errno is set).
      def notify(settings, name, errno)
        f = settings[name]
        return false unless f
        return false if f.call(self) == 0
        @errno = errno
        true
      end

      # A data callback with a copy of len bytes from at (the gem copies
      # them out of the C buffer): true if it failed.
      def data_cb(settings, name, errno, data, at, len)
        f = settings[name]
        return false unless f
        return false if f.call(self, data.unpack1("a#{len}", offset: at)) == 0
        @errno = errno
        true
      end
    end

    # The gem's HttpParser::Parser: callbacks by name, from an object's
    # methods or from blocks, and #parse.
    class Parser
      CALLBACKS = %i[on_message_begin on_url on_status on_header_field on_header_value
                     on_headers_complete on_body on_message_complete on_chunk_header on_chunk_complete].freeze

      def self.new_instance(&block)
        Instance.new(&block)
      end

      def initialize(callback_obj = nil)
        @settings = {}
        unless callback_obj.nil?
          CALLBACKS.each do |callback|
            __send__(callback, &callback_obj.method(callback)) if callback_obj.respond_to?(callback)
          end
        end
        yield self if block_given?
      end

      %i[on_message_begin on_headers_complete on_message_complete].each do |name|
        define_method(name) { |&block| @settings[name] = wrap(block) }
      end

      %i[on_url on_status on_header_field on_header_value on_body].each do |name|
        define_method(name) { |&block| @settings[name] = wrap(block) }
      end

      # (as the gem: these two take the place of on_message_complete)
      def on_chunk_header(&block)
        @settings[:on_message_complete] = wrap(block)
      end

      def on_chunk_complete(&block)
        @settings[:on_message_complete] = wrap(block)
      end

      # Parses data; true if the instance is in error (as the gem, whose
      # documentation says the opposite). The gem passes String#length as
      # the byte count: a String with multibyte characters is cut there.
      def parse(inst, data)
        unless inst.type == :response
          raise NotImplementedError, 'net-http-wasm: HttpParser in ruby.wasm reads responses only (type = :response)'
        end
        n = data.length
        inst.execute(@settings, n == data.bytesize ? data : data.byteslice(0, n))
        inst.error?
      end

      private

      # A callback's value to the parser: 0, or the value of stop! (1) or
      # error! (-1); an exception it raises is -1 (and is not seen again).
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
      TOPLEVEL_BINDING.eval(SOURCE, 'net_http_wasm/http_parser.rb', 25)
      const_get(name)
    end
  end

  # `require "http-parser"` now finds it loaded.
  $LOADED_FEATURES << File.join($LOAD_PATH.find { |d| d =~ %r{/ruby/\d+\.\d+\.\d+\z} } || '/', 'http-parser.rb')
end
