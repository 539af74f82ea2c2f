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
    # Kernel#sleep as Ruby has it (thread.rb changes it for threads).
    SLEEP = Kernel.instance_method(:sleep)

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
      @waiting = {}.compare_by_identity # fiber => the number of the wait it is in
      @interrupts = {}.compare_by_identity # fiber (or :main) => proc run where it waits
      @host_at = now # when the host last ran
    end

    # Whether a fiber of this scheduler's is alive or a timer is set: then
    # waits of the other fibers go through here, so that those run meanwhile.
    def busy?
      !@fibers.empty? || !@timers.empty?
    end

    # Whether fiber was made by this scheduler (it yields to wait).
    def owns?(fiber)
      @fibers.key?(fiber)
    end

    # Whether fiber (one of this scheduler's) waits.
    def waiting?(fiber)
      @waiting.key?(fiber)
    end

    # Fiber.schedule { }: a non-blocking fiber, run at once until it waits.
    def fiber(&block)
      f = Fiber.new(blocking: false) do
        block.call
      ensure
        @fibers.delete(Fiber.current)
      end
      add(f)
      f.resume
      collect_again
      f
    end

    # A non-blocking fiber (with that fiber storage) that starts when the
    # fiber that runs the scheduler next waits, as a new thread does.
    def spawn(storage, &block)
      f = Fiber.new(blocking: false, storage: storage) do
        block.call
      ensure
        @fibers.delete(Fiber.current)
      end
      add(f)
      @ready << [f, nil, nil]
      f
    end

    # Resumes fiber with value if it waits here (its wait ends).
    def wake(fiber, value)
      n = @waiting[fiber]
      @ready << [fiber, value, n] if n
      nil
    end

    # Makes fiber run action (a proc: it raises or throws) where it waits
    # or, not made here, where the fiber that runs the scheduler next waits
    # (fiber: :main).
    def interrupt(fiber, action)
      @interrupts[fiber] = action
      wake(fiber, :interrupt) unless fiber == :main
      nil
    end

    # Thread.pass: the other fibers run first.
    def pass
      f = Fiber.current
      if owns?(f)
        n = (@seq += 1)
        @ready << [f, :pass, n]
        suspend(n)
      else
        run_once(now)
      end
      nil
    end

    # One turn (Thread#join, ConditionVariable#wait... in a fiber not made
    # here): resumes what is ready, or waits for something, at most until
    # deadline.
    def poll(deadline = nil)
      run_once(deadline)
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
          suspend
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
          suspend != :timeout
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
        wake(fiber, :unblock)
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

    # IO.select: with no IO to watch, a sleep (the other fibers run);
    # else as without a scheduler.
    def io_select(readables, writables, exceptables, timeout)
      return Fiber.blocking { IO.select(readables, writables, exceptables, timeout) } unless [readables, writables, exceptables].all? { |a| a.nil? || a.empty? }

      kernel_sleep(timeout)
      nil
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

    # The garbage collector is off while fibers of this scheduler's are
    # alive: in ruby.wasm a fiber that waits keeps what its C frames hold
    # (the Array that Array#map is filling, in `threads.map(&:value)`)
    # where the collector does not look, and another fiber's allocations
    # would have it freed. It is on again once they have all ended, from
    # the fiber that runs the scheduler (not a waiting one).
    def add(fiber)
      @gc_off = !GC.disable if @fibers.empty?
      @fibers[fiber] = true
    end

    def collect_again
      return unless @fibers.empty? && @gc_off

      @gc_off = false
      GC.enable
    end

    # Yields (the current fiber is one of this scheduler's) until woken;
    # the value it is woken with. An interrupt (Thread#raise, #kill) is
    # run here.
    def suspend(n = (@seq += 1))
      f = Fiber.current
      @waiting[f] = n
      begin
        value = Fiber.yield
      ensure
        @waiting.delete(f)
      end
      action = @interrupts.delete(f)
      action&.call
      value
    end

    # Waits for the host until something settles or ms pass (ms < 0: no
    # limit). Where the host cannot run (vm.eval with a waiting
    # transport), only a timer can end the wait: the thread sleeps.
    def wait_host(ms)
      if NetHttpWasm.blocking?
        @bridge.call('idle', ms)
      else
        begin
          raise FiberError unless NetHttpWasm.can_await_host?
          NetHttpWasm.await_host(@bridge.call('whenSettled', ms))
        rescue FiberError
          # the fibers that wait for the network are told so; with none, a
          # wait for a timer sleeps
          e = FiberError.new('net-http-wasm: a wait for the network needs vm.evalAsync (or a blocking transport)')
          waiters = @results.values.grep(Fiber)
          raise e if waiters.size < @results.size || (waiters.empty? && ms.negative?)

          waiters.each { |f| interrupt(f, -> { raise e }) }
          Fiber.blocking { SLEEP.bind_call(self, ms / 1000.0) } if waiters.empty?
        end
      end
      @host_at = now
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
          value = suspend
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
        wait_host(wake ? [((wake - now) * 1000).ceil, 0].max : -1)
        fire_timers
        take_settled
      elsif now - @host_at > 0.01
        # fibers that keep passing to each other let the host run too
        wait_host(0)
        take_settled
      end
      ready = @ready
      @ready = []
      ready.each do |fiber, value, n|
        if fiber.is_a?(Integer)
          @results[fiber] = value if @results.key?(fiber)
        elsif fiber.alive? && (n.nil? || @waiting[fiber] == n)
          # (n: the wait it was woken from; a second wake of that wait is dropped)
          fiber.resume(value)
        end
      end
      collect_again
      action = @interrupts.delete(:main)
      action&.call
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
          wake(fiber, action)
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
          wake(waiter, value)
        elsif @results.key?(token)
          @ready << [token, value]
        end
      end
    end
  end
end
