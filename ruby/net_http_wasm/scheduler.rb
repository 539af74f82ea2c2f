# frozen_string_literal: true
#
# A Fiber::Scheduler (Ruby's interface: fiber, kernel_sleep, block/unblock,
# timeout_after, io_wait, close) over the host's event loop, so that
# fibers made with Fiber.schedule run their Net::HTTP requests, sleeps and
# Timeout.timeout blocks at the same time inside one vm.evalAsync:
#
#   NetHttpWasm::Scheduler.run do
#     10.times { |i| Fiber.schedule { Net::HTTP.get(URI("http://host/#{i}")) } }
#   end   # returns when every fiber has finished
#
# A scheduled fiber that waits (for the host: a connection, a response, a
# timer) yields here; the fiber that runs the scheduler (the one that calls
# Fiber.set_scheduler, or any fiber not made by #fiber) runs the others
# while it waits itself, and waits for the host with one promise for
# "whatever settles first". With a blocking transport a fiber's call that
# would wait for the network is made without blocking (the bridge keeps the
# wait), and when every fiber waits the scheduler blocks the thread until
# the I/O thread reports something that ends a wait, or a timer is due.

module NetHttpWasm
  class Scheduler
    # Sets a new scheduler for the block and runs every fiber it schedules
    # to completion before returning (as Fiber.set_scheduler(nil) does).
    def self.run
      previous = Fiber.scheduler
      scheduler = new
      Fiber.set_scheduler(scheduler)
      begin
        yield scheduler
      ensure
        Fiber.set_scheduler(previous)
      end
    end

    def initialize
      @bridge = NetHttpWasm.bridge
      @fibers = {}.compare_by_identity # fibers made by #fiber and still alive
      @ready = [] # [fiber, value]: to resume
      @timers = [] # [deadline, seq, fiber, action], kept sorted
      @results = {} # token => value, for waits of fibers not made here
      @seq = 0
    end

    # Whether fiber was made by this scheduler (it yields to wait).
    def owns?(fiber)
      @fibers.key?(fiber)
    end

    # Fiber.schedule { }: a non-blocking fiber, run at once until it waits.
    def fiber(&block)
      f = Fiber.new(blocking: false) do
        block.call
      ensure
        @fibers.delete(Fiber.current)
      end
      @fibers[f] = true
      f.resume
      f
    end

    # A promise of the bridge's (NetHttpWasm.await): the value it settles
    # with, as a String.
    def await_promise(promise)
      token = (@seq += 1)
      @bridge.call('collect', promise, token)
      wait_for(token)
    end

    # A blocking transport's bridge call that may wait for the network
    # (NetHttpWasm.call_wait), made without blocking (Bridge#deferred): its
    # value, as a String.
    def deferred(name, args)
      token = (@seq += 1)
      @bridge.call('deferred', token, name.to_s, *args)
      wait_for(token, true)
    end

    # Kernel#sleep.
    def kernel_sleep(duration = nil)
      if owns?(Fiber.current)
        timer = duration && add_timer(duration, Fiber.current, :wake)
        begin
          Fiber.yield
        ensure
          cancel(timer)
        end
      elsif duration
        deadline = now + duration
        run_once(deadline) while now < deadline
      else
        run_once while true
      end
      nil
    end

    # Mutex, Queue, ConditionVariable... waiting: true when unblocked,
    # false on timeout.
    def block(_blocker, timeout = nil)
      if owns?(Fiber.current)
        timer = timeout && add_timer(timeout, Fiber.current, :timeout)
        begin
          Fiber.yield != :timeout
        ensure
          cancel(timer)
        end
      else
        @unblocked = false
        deadline = timeout && now + timeout
        run_once(deadline) until @unblocked || (deadline && now >= deadline)
        @unblocked
      end
    end

    def unblock(_blocker, fiber)
      if owns?(fiber)
        @ready << [fiber, :unblock]
      else
        @unblocked = true
      end
      nil
    end

    # Raised inside a Timeout.timeout block when its time is up; not a
    # StandardError (as Timeout::ExitException), so that code inside the
    # block (Net::HTTP's retry on Timeout::Error) does not take it for its own.
    class Expired < Exception # rubocop:disable Lint/InheritException
      attr_reader :tag

      def initialize(tag)
        @tag = tag
        super('execution expired')
      end
    end

    # Timeout.timeout without a thread: a timer raises in the fiber, and
    # the block's caller gets klass (Timeout::Error) with the message.
    def timeout_after(duration, klass, message)
      tag = Object.new
      timer = add_timer(duration, Fiber.current, Expired.new(tag))
      begin
        yield duration
      rescue Expired => e
        raise unless e.tag.equal?(tag)
        raise klass, message
      ensure
        cancel(timer)
      end
    end

    # IO#wait_readable and friends on the VM's own IOs (WASI files are
    # always ready; connections wait through the bridge, not here).
    def io_wait(_io, events, _timeout)
      events
    end

    # Ruby 4.0: interrupts a fiber waiting on an IO that is being closed.
    def fiber_interrupt(fiber, exception)
      fiber.raise(exception) if fiber.alive? && !fiber.equal?(Fiber.current)
    end

    # Fiber.set_scheduler(nil), or the thread's end: runs every fiber to
    # completion.
    def close
      run_once until @fibers.empty?
    end

    def scheduler_close
      close
    end

    private

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    def add_timer(seconds, fiber, action)
      t = [now + seconds, @seq += 1, fiber, action]
      i = @timers.bsearch_index { |x| (x[0] <=> t[0]).nonzero? ? x[0] > t[0] : x[1] > t[1] } || @timers.size
      @timers.insert(i, t)
      t
    end

    def cancel(timer)
      @timers.delete(timer) if timer
    end

    # The value noted for token, the current fiber yielding (a fiber of
    # this scheduler's) or running the others until then. A blocking
    # transport's wait given up (an exception in the fiber) is dropped
    # (`forget`).
    def wait_for(token, forget = false)
      value = nil
      if owns?(Fiber.current)
        @results[token] = Fiber.current
        begin
          value = Fiber.yield
        ensure
          @results.delete(token)
          @bridge.call('forget', token) if forget && value.nil?
        end
      else
        @results[token] = nil
        begin
          run_once until (value = @results[token])
          value
        ensure
          @results.delete(token)
          @bridge.call('forget', token) if forget && value.nil?
        end
      end
    end

    # Resumes what is ready; if nothing is, waits for the host (a promise
    # settling) or the next timer, at most until deadline.
    def run_once(deadline = nil)
      fire_timers
      take_settled
      if @ready.empty?
        wake = @timers.empty? ? deadline : [@timers[0][0], deadline].compact.min
        raise FiberError, 'net-http-wasm: every fiber is waiting and nothing can wake them (deadlock)' if wake.nil? && @results.empty?
        ms = wake ? [((wake - now) * 1000).ceil, 0].max : -1
        if NetHttpWasm.blocking?
          @bridge.call('idle', ms)
        else
          NetHttpWasm.await_host(@bridge.call('whenSettled', ms))
        end
        fire_timers
        take_settled
      end
      ready = @ready
      @ready = []
      ready.each do |fiber, value|
        if fiber.is_a?(Integer)
          @results[fiber] = value if @results.key?(fiber)
        elsif fiber.alive?
          fiber.resume(value)
        end
      end
    end

    def fire_timers
      t = now
      while (timer = @timers[0]) && timer[0] <= t
        @timers.shift
        _, _, fiber, action = timer
        if action.is_a?(Exception)
          raise action if fiber.equal?(Fiber.current)
          fiber.raise(action) if fiber.alive?
        else
          @ready << [fiber, action]
        end
      end
    end

    # "token\nvalue\0..." of the promises that settled (Bridge#collect).
    def take_settled
      s = @bridge.call('takeSettled').to_s
      return if s.empty?
      s.split("\0").each do |entry|
        token, value = entry.split("\n", 2)
        token = token.to_i
        waiter = @results[token]
        if waiter.is_a?(Fiber)
          @ready << [waiter, value]
        elsif @results.key?(token)
          @ready << [token, value]
        end
      end
    end
  end
end
