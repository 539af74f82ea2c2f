# frozen_string_literal: true
#
# The errors the bridge reports (Lines::Failure: a class and a message)
# raised as MRI raises them.

module NetHttpWasm
  # Raised where the codec's limits (header bytes, fields, body) are passed.
  class LimitError < StandardError; end

  # Raised when fetch() fails (browsers): a network error or a response the
  # page may not read (CORS). MRI would raise at connect; this comes at read.
  class FetchError < SocketError; end

  # Raised where a fiber waits for a promise of the bridge's that rejected
  # (they never do: a defect of the host's side, named in the message).
  class HostError < StandardError; end

  class << self
    # What a settled wait gives the fiber that waits (Lines::Settled): its
    # value, or a HostError when the promise rejected.
    def settled_value(settled)
      return settled.value unless settled.failed

      HostError.new("net-http-wasm: a promise of the host's rejected: #{settled.value}")
    end

    # Raises the error the bridge reported (error() after RC_ERROR).
    def raise_last_error
      raise_payload(@bridge.call('error').to_s.b)
    end

    # Raises the failure of a String of Lines::Failure (an R_ERROR record's
    # payload, error()'s reply).
    def raise_payload(payload)
      raise_failure(Lines::Failure.read(payload))
    end

    # Raises what a Lines::Failure names: its class, with its message.
    def raise_failure(failure)
      name = failure.kind.to_s
      message = failure.detail.to_s
      utf8 = message.dup.force_encoding(Encoding::UTF_8)
      message = utf8 if utf8.valid_encoding?
      klass = error_class(name)
      raise errno(klass, message.empty? ? nil : message) if klass <= SystemCallError
      raise klass, message
    end

    # strerror(3) as glibc words it (what MRI on Linux says); wasi-libc,
    # which the VM's own Errno messages come from, words some differently.
    STRERROR = {
      'ECONNREFUSED' => 'Connection refused',
      'ECONNRESET' => 'Connection reset by peer',
      'ECONNABORTED' => 'Software caused connection abort',
      'ETIMEDOUT' => 'Connection timed out',
      'EHOSTUNREACH' => 'No route to host',
      'ENETUNREACH' => 'Network is unreachable',
      'ENETDOWN' => 'Network is down',
      'EPIPE' => 'Broken pipe',
      'EADDRNOTAVAIL' => 'Cannot assign requested address',
      'EADDRINUSE' => 'Address already in use',
      'EACCES' => 'Permission denied',
      'EPERM' => 'Operation not permitted',
      'ENOENT' => 'No such file or directory',
    }.freeze

    # An Errno exception with MRI-on-Linux's message ("text - detail").
    def errno(klass, detail = nil)
      name = klass.name.to_s.delete_prefix('Errno::')
      text = STRERROR[name]
      # (SystemCallError itself, for a code Ruby has no Errno class of:
      # "unknown error - detail")
      return SystemCallError.new(detail) if klass.equal?(SystemCallError)

      e = klass.new
      return e unless text
      e.exception(detail ? "#{text} - #{detail}" : text)
    end

    def error_class(name)
      @errors[name] ||= begin
        k = Object.const_get(name)
        k.is_a?(Class) && k <= Exception ? k : RuntimeError
      rescue NameError
        RuntimeError
      end
    end
  end
end
