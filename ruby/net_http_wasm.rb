# frozen_string_literal: true
#
# net-http-wasm: Net::HTTP for ruby.wasm.
#
# Evaluated inside the VM by installNetHttp (js/ruby/install.mjs), file by
# file (net_http_wasm/stand_ins.rb first, then this file, then the rest of
# net_http_wasm/), which then calls NetHttpWasm.__install with its bridge
# (js/ruby/bridge.mjs). ruby.wasm has neither the `socket` nor the `io/wait`
# extension, no sockets and no threads, so:
#
#   1. stand_ins.rb defines stand-ins for `socket`, `io/wait` and
#      OpenSSL::SSL, so that `require 'net/http'` works;
#   2. patches.rb replaces Net::HTTP#connect: the host opens the connection
#      (node:net / node:tls in Node, a virtual connection over fetch() in
#      browsers) and NetHttpWasm::Socket (socket.rb) is the IO that
#      Net::BufferedIO reads and writes;
#   3. patches.rb hands the byte work to the codec (a WebAssembly module on
#      the JS side): Net::HTTPGenericRequest#exec sends the request's method,
#      path, header hash and body in one call and the codec writes the bytes;
#      Net::HTTPResponse.read_new and #read_body_0 take the response from the
#      codec's incremental parser as records (buffered_io.rb).
#      Everything else (Net::HTTP#request, transport_request, keep-alive,
#      retries, read_timeout, body encodings, Net::HTTPResponse's API) is
#      net/http's own code. NetHttpWasm.codec = false turns step 3 off: then
#      net/http's Ruby code does the byte work over the same sockets.
#
# Waiting: with a blocking transport the bridge's calls return when done
# (the JS thread waits, as a Ruby thread does natively). With a waiting
# transport they return JS promises, awaited by switching to the fiber of
# vm.evalAsync / RbValue#callAsync (anywhere else the first wait raises);
# the garbage collector is held off while a fiber waits (collector.rb).
#
# Bytes cross to JS as (address, length) of a String's bytes in the VM's
# memory ([str].pack('p')), and come back written by JS into a String
# allocated here: one copy each way, no base64, no per-byte loop. Calls name
# the bridge's method, and reads its property, with a String: given a
# Symbol, JS::Object#call and #[] convert it with Symbol#to_s, Ruby code
# entered from C (a setjmp: ruby.wasm unwinds its stack for each) every time.

require 'js'
require 'json'

module NetHttpWasm
  VERSION = '0.1.0'

  # unpack formats of the short lengths, made once
  UNPACK = Array.new(256) { |n| "a#{n}" }.freeze

  # The codec's receive buffer: it starts small and doubles while reads fill it.
  BUF_MIN = 16 * 1024
  BUF_MAX = 1024 * 1024
  # The buffer of request records (longer ones are sent from where they are).
  HDR_BUF = 4096

  # net-http >= 0.7 (Ruby 3.5/4.0) adds no default Content-Type to a body.
  DEFAULT_CONTENT_TYPE = Net::HTTPGenericRequest.private_method_defined?(:supply_default_content_type)
  # net-http 0.9 opens with TCPSocket.open(..., open_timeout:) (4.0); older
  # versions wrap the whole connect in Timeout.timeout (3.4).
  SOCKET_OPEN_TIMEOUT = Net::HTTP.private_method_defined?(:timeouted_connect)

  # vm.evalAsync's code runs in a fiber of the js gem's (JS.__async), whose
  # rescue makes a StandardError the promise's rejection. Any other
  # exception (SystemStackError, NoMemoryError, a bare Exception, exit)
  # raised once the code has waited would end that fiber with nothing to
  # catch it: it came out of the bridge's wake as an error of the host's
  # (uncaught, ending a Node process), and the promise never settled. It
  # is the rejection too.
  module EvalAsyncEnd
    def __async(future, &block)
      super(future) do
        block.call
      rescue ::StandardError
        raise
      rescue ::Exception => e # rubocop:disable Lint/RescueException
        future.reject(JS::Object.wrap(e))
        nil # (super's resolve then does nothing: the promise is settled)
      end
    end
  end
  JS.singleton_class.prepend(EvalAsyncEnd) if JS.respond_to?(:__async)

  # The program's own JS::Object#await (JS.promise_scheduler's await) waits
  # as the package's waits do. ruby.wasm's would let Ruby's collector run
  # while the fiber is switched out (collector.rb: what a C method's block
  # fills, as in `urls.map { |u| JS.global.fetch(u).await }`, was freed), and
  # resumes the fiber from a Ruby proc called as the promise's reaction,
  # where a VM that dies rejects a promise no one handles. With a waiting
  # transport, inside vm.evalAsync, it is NetHttpWasm.await_js; elsewhere
  # ruby.wasm's own, with the collector held off while it waits.
  module ProgramAwait
    def await(promise)
      return NetHttpWasm.await_js(promise) if NetHttpWasm.can_await_host?

      fiber = Fiber.current
      Collector.park(fiber)
      begin
        super
      ensure
        Collector.unpark(fiber)
      end
    end
  end
  JS.promise_scheduler.singleton_class.prepend(ProgramAwait)

  # The promise of one vm.evalAsync (__eval_async), as ruby.wasm's
  # JS.__async settles it: through the bridge the code was taken from, with
  # the value or the exception as JS::Object.wrap makes them JS values
  # (RbValues on the JS side).
  EvalFuture = Struct.new(:bridge, :token) do
    def resolve(value)
      bridge.call('evalSettled', token, 1, value)
    end

    def reject(error)
      bridge.call('evalSettled', token, 0, error)
    end
  end

  class << self
    attr_reader :bridge, :profile, :transport

    # Whether the codec does the byte work (default true). false: net/http's
    # own Ruby code reads and writes the messages over the same sockets.
    def codec?
      @codec
    end

    def codec=(on)
      @codec = on ? true : false
    end

    # Whether the bridge's waits block (true) or return promises.
    def blocking?
      @blocking
    end

    # Called by installNetHttp.
    def __install(bridge, config)
      cfg = JSON.parse(config.to_s)
      @bridge = bridge
      @codec = cfg['codec'] ? true : false
      @profile = cfg['profile']
      @transport = cfg['transport']
      @blocking = cfg['blocking'] ? true : false
      @errors = {}
      # The fiber vm.evalAsync returns to JS from (JS::PromiseScheduler's).
      # Waiting parks the current fiber there, and the bridge resumes it
      # when the promise settles (__wake).
      @loop = JS.promise_scheduler.instance_variable_get(:@loop)
      @waiters = {}
      @token = 0
      # every wait of a waiting transport's lets the host run (sleep, Queue#pop...)
      Fiber.set_scheduler(Scheduler.new) unless @blocking || Fiber.scheduler
      true
    end

    # Called by the bridge when a promise a fiber waits on has settled
    # (Waits#park, js/ruby/waits.mjs): resumes that fiber with the value. No arguments: the
    # bridge's call passes none (js/ruby/rubywasm-internals.mjs, waker).
    def __wake
      settled = Lines::Settled.read(@bridge['settled'].to_s)
      @waiters.delete(settled.token)&.transfer(settled_value(settled))
      nil
    end

    # vm.evalAsync (js/ruby/rubywasm-internals.mjs, evaluator): the code the
    # bridge holds (lines.evaluation) run by ruby.wasm's own code for it
    # (JS.__eval_async_rb: a fiber of JS.__async, Kernel.eval at the top
    # level), given a String and an EvalFuture rather than the JS values
    # ruby.wasm's evalAsync makes for the code and the promise, which the VM
    # keeps for good. No arguments, as __wake.
    def __eval_async
      e = Lines::Evaluation.read(@bridge['evaluation'].to_s)
      JS.__send__(:__eval_async_rb, e.code, EvalFuture.new(@bridge, e.token))
      nil
    end

    # A copy of len bytes of buf from at. Strings written by JS into Ruby
    # memory are copied out with unpack('aN'), never byteslice'd: a slice may
    # share (not copy) the buffer, which the next read overwrites.
    def copy_out(buf, at, len)
      buf.unpack1(len < 256 ? UNPACK[len] : "a#{len}", offset: at)
    end

    # (addr, the address of a String's bytes: compile_cache.rb, loaded first)

    # Bridge call `name`, one that may wait for the network (open, recv,
    # wait...): its value. A blocking transport waits in the call, except
    # under NetHttpWasm::Scheduler, which makes the call without blocking
    # and waits for it along with its other fibers; a waiting transport's
    # promise is awaited.
    def call_wait(name, *args)
      if @blocking
        s = Fiber.scheduler
        return @bridge.call(name, *args) unless s.is_a?(Scheduler) && s.busy?
        s.deferred(name, args)
      else
        await(@bridge.call(name, *args))
      end
    end

    # call_wait for a call that a waiting transport may answer at once, with
    # its value instead of a promise (open: a connection made at once).
    def call_wait_or_now(name, *args)
      return call_wait(name, *args) if @blocking
      # where Ruby cannot wait (vm.eval), it says so before anything starts
      s = Fiber.scheduler
      if !(s.is_a?(Scheduler) && s.busy?) && (@loop.nil? || Fiber.current.equal?(@loop))
        await(JS.global[:Promise].call(:resolve))
      end
      r = @bridge.call(name, *args)
      # (the answers of these calls are never the text of a promise)
      s = r.to_s
      s == '[object Promise]' ? await(r) : s
    end

    # Waits for a promise of the bridge's (it never rejects, and gives a
    # number or a string): as JS::Object#await, with one JS→Ruby call to
    # come back. Returns the value as a String (HostError is raised if the
    # promise rejected after all).
    def await(promise)
      s = Fiber.scheduler
      v = s.is_a?(Scheduler) && s.busy? ? s.await_promise(promise) : await_host(promise)
      raise v if v.is_a?(HostError)
      v
    end

    # Waits for a promise by returning to the host's event loop. The
    # collector is held off meanwhile (collector.rb): this fiber's C locals
    # are out of its sight until it is woken.
    def await_host(promise)
      loop = @loop
      fiber = Fiber.current
      Collector.park(fiber)
      begin
        return JS.promise_scheduler.await(promise) if loop.nil? || fiber.equal?(loop)

        token = (@token += 1)
        @waiters[token] = fiber
        @bridge.call('park', promise, token)
        begin
          loop.transfer
        rescue FiberError
          # (vm.eval: the fiber that runs it resumed this one, and is not
          # waiting to be transferred to)
          @waiters.delete(token)
          raise
        end
      ensure
        Collector.unpark(fiber)
        Collector.collect_if_due
      end
    end

    # Whether this fiber can wait for a promise of the host's (a waiting
    # transport, inside vm.evalAsync).
    def can_await_host?
      !@blocking && !@loop.nil? && !Fiber.current.equal?(@loop)
    end

    # JS::Object#await of a promise of the program's (ProgramAwait): waits
    # for it as for the bridge's (under a busy NetHttpWasm::Scheduler, along
    # with its other fibers), then gives its value as a JS::Object, or raises
    # JS::Error with its reason, as ruby.wasm's await does.
    def await_js(promise)
      token = (@token += 1)
      begin
        ok = await(@bridge.call('outcome', promise, token)) == '1'
      ensure
        # (also when the wait is given up: the kept value is let go)
        value = @bridge.call('outcomeValue', token)
      end
      raise JS::Error.new(value) unless ok

      value
    end

    # IPSocket.getaddress: the host resolves the name (an IP address is
    # returned as it is).
    def getaddress(host)
      getaddresses(host).first
    end

    # Every address of host, as the host's resolver gives them (getaddrinfo(3)'s order).
    def getaddresses(host)
      h = c_str(host.to_s)
      return [h] if h.match?(/\A\d{1,3}(?:\.\d{1,3}){3}\z/) || h.include?(':')
      r = call_wait('resolve', h).to_s
      return Lines.read_addresses_list(r) unless r.start_with?('!')
      NetHttpWasm::Socket.raise_open_error(Lines::Failure.read(r[1..]), h, nil)
    end

    def ms(seconds)
      seconds.nil? ? -1 : (seconds * 1000).ceil
    end
  end
end
