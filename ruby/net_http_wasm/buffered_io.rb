# frozen_string_literal: true

module NetHttpWasm
  # Net::BufferedIO over a NetHttpWasm::Socket, plus the codec's message I/O.
  class BufferedIO < Net::BufferedIO
    def initialize(io, **kw)
      super
      @bridge = NetHttpWasm.bridge
      @blocking = NetHttpWasm.blocking?
      @id = io.id
      @buf = "\0".b * BUF_MIN
      @buf_addr = NetHttpWasm.addr(@buf)
      @hdr_buf = nil
      @bound = false
      @grow = false
      @rec_pos = 0
      @rec_end = 0
      @codec_msg = false
    end

    # Whether this request can go through the codec.
    def codec_ready?
      NetHttpWasm.codec? && @debug_output.nil? && @rbuf_offset == @rbuf.bytesize && !@io.closed?
    end

    # The message being read came from the codec.
    def codec_msg?
      @codec_msg
    end

    # net/http's own code writes (and so reads) this message.
    def raw_msg!
      @codec_msg = false
    end

    # Writes a request serialized by the codec (hdr, flags: see
    # Bridge#request, js/ruby/bridge.mjs); the response's first records come
    # back with it when they are there already.
    def codec_send(hdr, flags, body)
      @rec_pos = @rec_end = 0
      bind unless @bound
      # an ASCII record goes through the bound buffer (taking a String's
      # address costs more than copying it there)
      n = hdr.bytesize
      rc = if n <= HDR_BUF && hdr.ascii_only?
        @hdr_buf.bytesplice(0, n, hdr)
        if body
          @bridge.call('request', @id, n, flags, NetHttpWasm.addr(body), body.bytesize)
        elsif @blocking && !Fiber.scheduler.is_a?(Scheduler)
          # a blocking transport waits for the response's first records in
          # the same call, as fill_records would next (a timeout is told by
          # the recv that follows, in read_new); not under the scheduler,
          # whose other fibers must run while this one waits
          @bridge.call('requestWait', @id, n, flags, NetHttpWasm.ms(@read_timeout))
        else
          @bridge.call('request', @id, n, flags)
        end
      else
        body ? @bridge.call('request', @id, n, flags, NetHttpWasm.addr(body), body.bytesize, NetHttpWasm.addr(hdr)) : @bridge.call('request', @id, n, flags, 0, 0, NetHttpWasm.addr(hdr))
      end
      rc = rc.to_i
      NetHttpWasm.raise_last_error if rc < 0 && rc > -NEED_BASE
      # as write0 when the kernel's buffer is full: the body must leave within
      # write_timeout (only a large body can fill the buffers)
      if body && body.bytesize > UNSENT_MAX && !@io.wait_writable(@write_timeout)
        raise Net::WriteTimeout.new(@io)
      end
      @codec_msg = true
      if rc > 0
        @rec_end = rc
        @grow = true if rc > @buf.bytesize - 4096 && @buf.bytesize < BUF_MAX
      end
      # nothing can have arrived yet: the first read waits (a head too large
      # for the buffer: it grows first)
      @fresh = rc == 0
      nil
    end

    # Net::HTTPResponse.read_new, from the codec's records: u8 type, u32 LE
    # length, payload (schema/bridge.mjs), from @rec_pos to @rec_end in @buf.
    # (Records are read inline here and in codec_read_body: a method call per
    # record costs more than the rest of its reading in ruby.wasm.)
    def codec_read_head
      while true
        fill_records if @rec_pos >= @rec_end
        type, len = @buf.unpack('CV', offset: @rec_pos)
        at = @rec_pos + 5
        @rec_pos = at + len
        if type == R_HEAD
          # (a message without a body ends with its head: its end record
          # stays queued and is dropped by the next codec_send)
          return build_response(@buf.getbyte(at), NetHttpWasm.copy_out(@buf, at + 1, len - 1).split("\n", -1))
        end
        raise_record(at, len) if type == R_ERROR
      end
    end

    # Net::HTTPResponse#read_body_0, from the codec's records.
    def codec_read_body(dest, res)
      # a String destination takes body bytes straight from the receive
      # buffer (one copy), and a large body of known size straight from the
      # bridge (read_body_direct); anything else (read_body's block) gets
      # its own
      shared = String === dest
      while true
        fill_records if @rec_pos >= @rec_end
        type, len = @buf.unpack('CV', offset: @rec_pos)
        at = @rec_pos + 5
        @rec_pos = at + len
        case type
        when R_LAST
          dest << (shared ? @buf.byteslice(at, len) : payload(at, len))
          @codec_msg = false
          return
        when R_BODY
          dest << (shared ? @buf.byteslice(at, len) : payload(at, len))
        when R_SIZE
          read_body_direct(dest, payload(at, len).to_i) if shared
        when R_END
          @codec_msg = false
          unless len == 0
            a = payload(at, len).split("\n", -1)
            res.instance_variable_set(:@header, Lines.head_fields(a, 0))
          end
          return
        when R_ERROR
          raise_record(at, len)
        end
      end
    end

    private

    # The body bytes after an R_SIZE record (size: the body's), written by
    # the bridge straight into one String of the body's size when dest is an
    # empty String and the size at most BODY_WHOLE (Net::HTTP.get, #body: the
    # body costs its size once, with no growth of dest), else into Strings
    # of BODY_SEGMENT bytes at most, each handed to dest as it is full; what
    # remains (a body shorter or longer than announced, its end, an error)
    # is read as records.
    def read_body_direct(dest, size)
      return read_segment(dest, size) if size <= BODY_WHOLE && dest.empty? && dest.instance_of?(String)

      while size > 0
        seg = size < BODY_SEGMENT ? size : BODY_SEGMENT
        got = read_segment(dest, seg)
        return if got < seg
        size -= seg
      end
    end

    # Up to n body bytes into one String, handed to dest (also when a
    # timeout or an error stops it): the bytes read.
    def read_segment(dest, n)
      # (a String made this way has no coderange yet: it is found from the
      # bytes the bridge writes, when first asked)
      s = "\0".b * n
      addr = NetHttpWasm.addr(s)
      got = 0
      begin
        while got < n
          k = @bridge.call('bodyNow', @id, addr + got, n - got).to_i
          if k == RC_WOULD_BLOCK
            k = NetHttpWasm.call_wait('body', @id, addr + got, n - got, NetHttpWasm.ms(@read_timeout)).to_i
          end
          break if k == 0
          if k < 0
            @codec_msg = false
            raise Net::ReadTimeout.new(@io) if k == RC_TIMEOUT
            NetHttpWasm.raise_last_error
          end
          got += k
        end
      ensure
        hand_over(dest, s, got)
      end
      got
    end

    # dest << the first got bytes of s. An empty String takes s over with
    # no copy, and the encoding << gives it: dest's own when s is ASCII
    # (and dest's encoding ASCII-compatible), else s's (binary).
    def hand_over(dest, s, got)
      return if got == 0
      s = s.byteslice(0, got) if got < s.bytesize
      if dest.empty? && dest.instance_of?(String)
        enc = dest.encoding
        dest.replace(s)
        dest.force_encoding(enc) if enc != Encoding::BINARY && enc.ascii_compatible? && s.ascii_only?
      else
        dest << s
      end
    end

    # The message failed: raises the error an error record carries.
    def raise_record(at, len)
      @codec_msg = false
      NetHttpWasm.raise_payload(payload(at, len))
    end

    # A copy of a record's payload.
    def payload(at, len)
      NetHttpWasm.copy_out(@buf, at, len)
    end

    # Ruby's buffers for the bridge (Bridge#bind): the receive buffer, and
    # the request records' buffer.
    def bind
      unless @hdr_buf
        @hdr_buf = "\0".b * HDR_BUF
        @hdr_addr = NetHttpWasm.addr(@hdr_buf)
      end
      @bridge.call('bind', @id, @buf_addr, @buf.bytesize, @hdr_addr)
      @bound = true
    end

    def fill_records
      if @grow
        @grow = false
        @buf = "\0".b * (@buf.bytesize * 2)
        @buf_addr = NetHttpWasm.addr(@buf)
        bind
      end
      while true
        n = if @fresh
          RC_WOULD_BLOCK # nothing can have arrived yet: wait
        else
          @bridge.call('recvNow', @id).to_i
        end
        @fresh = false
        if n == RC_WOULD_BLOCK
          n = NetHttpWasm.call_wait('recv', @id, NetHttpWasm.ms(@read_timeout)).to_i
        end
        if n > 0
          @rec_pos = 0
          @rec_end = n
          @grow = true if n > @buf.bytesize - 4096 && @buf.bytesize < BUF_MAX
          return
        end
        if n <= -NEED_BASE
          @buf = "\0".b * [-n - NEED_BASE, @buf.bytesize * 2].max
          @buf_addr = NetHttpWasm.addr(@buf)
          bind
          next
        end
        @codec_msg = false
        raise Net::ReadTimeout.new(@io) if n == RC_TIMEOUT
        NetHttpWasm.raise_last_error
      end
    end

    # The response of a head record (R_HEAD, written by the module): its
    # flags, and its lines (schema/bridge.mjs headRecord).
    def build_response(flags, a)
      code = a[HEAD_CODE_AT]
      # (response_class's first lookup, without its call)
      klass = Net::HTTPResponse::CODE_TO_OBJ[code] || Net::HTTPResponse.__send__(:response_class, code)
      res = klass.new(flags & HEAD_VERSION == 0 ? nil : a[HEAD_VERSION_AT], code, flags & HEAD_MESSAGE == 0 ? nil : a[HEAD_MESSAGE_AT])
      res.instance_variable_set(:@header, Lines.head_fields(a, HEAD_FIELDS_AT))
      inflate = flags & (HEAD_INFLATE | HEAD_DROP_ENCODING)
      res.instance_variable_set(:@__nhw_inflate, inflate) if inflate != 0
      res
    end
  end
end
