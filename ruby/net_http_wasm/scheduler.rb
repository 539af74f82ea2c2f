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
      @timers = [] # [deadline, seq, fiber, action, done]: a binary heap (earliest first)
      @timer_count = 0 # timers in @timers neither fired nor cancelled
      @results = {} # token => value, for waits of fibers not made here
      @seq = 0
      @waiting = {}.compare_by_identity # fiber => the number of the wait it is in
      @interrupts = {}.compare_by_identity # fiber (or :main) => procs to run where it waits, in turn
      @host_at = now # when the host last ran
      @switched_out = Collector::SwitchedOut.new(@waiting) # whether a collection is safe meanwhile
      @holding = false # whether it holds the collector off (collector.rb)
    end

    # Whether a fiber of this scheduler's is alive or a timer is set: then
    # waits of the other fibers go through here, so that those run meanwhile.
    def busy?
      !@fibers.empty? || @timer_count.positive?
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
        @bridge.call('headroom')
        block.call
      ensure
        gone(Fiber.current)
      end
      add(f)
      f.resume
      collect_again
      collect_if_due
      f
    end

    # A non-blocking fiber (with that fiber storage) that starts when the
    # fiber that runs the scheduler next waits, as a new thread does.
    def spawn(storage, &block)
      f = Fiber.new(blocking: false, storage: storage) do
        @bridge.call('headroom')
        block.call
      ensure
        gone(Fiber.current)
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
    # (fiber: :main). A second one before the first has run waits for the
    # fiber's next wait (as MRI keeps a thread's pending interrupts).
    def interrupt(fiber, action)
      (@interrupts[fiber] ||= []) << action
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

    # Collects if one is due, in the fiber that runs the scheduler (not
    # one of its own), when neither a waiting fiber of its own nor one
    # waiting for the host may hold objects where the collector does not
    # look (collector.rb).
    def collect_if_due
      return unless @holding && Collector.held? && !@fibers.empty? && Collector.due?(@fibers.size)
      return if owns?(Fiber.current) || !@switched_out.safe? || !Collector.parked_safe?

      Collector.collect
    end

    private

    def now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # Timers: a binary heap ordered by deadline, then by when they were
    # set; a cancelled timer is marked done and left where it is (dropped
    # when it comes first, or when done ones are most of the heap).
    def add_timer(seconds, fiber, action)
      t = [now + seconds, @seq += 1, fiber, action, false]
      @timers << t
      sift_up(@timers.size - 1)
      @timer_count += 1
      t
    end

    def cancel(timer)
      return unless timer && !timer[4]

      timer[4] = true
      @timer_count -= 1
      return unless @timers.size > 64 && @timers.size > 4 * @timer_count

      @timers.reject! { |t| t[4] }
      (@timers.size / 2 - 1).downto(0) { |i| sift_down(i) }
    end

    # The earliest timer not done (nil: none).
    def next_timer
      pop_timer while (t = @timers[0]) && t[4]
      t
    end

    def pop_timer
      last = @timers.pop
      return if @timers.empty?

      @timers[0] = last
      sift_down(0)
    end

    def before?(a, b)
      a[0] < b[0] || (a[0] == b[0] && a[1] < b[1])
    end

    def sift_up(i)
      h = @timers
      while i.positive?
        up = (i - 1) / 2
        break unless before?(h[i], h[up])

        h[i], h[up] = h[up], h[i]
        i = up
      end
    end

    # (while, not Kernel#loop: a break out of a block leaves through the C
    # method's frame, a longjmp in ruby.wasm, and on Ruby 3.2 each such exit
    # keeps some of the machine stack of a fiber woken from the host while
    # fibers it resumed wait, as this one is: a few dozen timers fired and
    # it overflowed)
    def sift_down(i)
      h = @timers
      n = h.size
      while true
        l = 2 * i + 1
        break if l >= n

        c = l + 1 < n && before?(h[l + 1], h[l]) ? l + 1 : l
        break unless before?(h[c], h[i])

        h[i], h[c] = h[c], h[i]
        i = c
      end
    end

    # The garbage collector (collector.rb): off while this scheduler's
    # fibers are alive, since a fiber switched out (one that waits, or one
    # that resumed another) keeps its C locals where the collector does not
    # look: the Array of `threads.map(&:value)` (the program resumes the
    # threads from inside Array#map), or of a thread's `urls.map { get }`.
    # The fiber that runs the scheduler collects instead, between the
    # fibers it resumes (collect_if_due). It is on again once the fibers
    # have all ended, from the fiber that runs the scheduler.
    def add(fiber)
      unless @holding
        @holding = true
        Collector.hold
      end
      @fibers[fiber] = true
    end

    def gone(fiber)
      @fibers.delete(fiber)
      @switched_out.forget(fiber)
      @interrupts.delete(fiber)
    end

    def collect_again
      return unless @fibers.empty? && @holding

      @holding = false
      Collector.release
    end

    # Yields (the current fiber is one of this scheduler's) until woken;
    # the value it is woken with. An interrupt (Thread#raise, #kill, a
    # Timeout's expiry) is run here, one still pending from an earlier
    # wait before it yields.
    def suspend(n = (@seq += 1))
      f = Fiber.current
      run_interrupt(f)
      @waiting[f] = n
      begin
        value = Fiber.yield
      ensure
        @waiting.delete(f)
      end
      run_interrupt(f)
      value
    end

    # Runs the first interrupt pending for fiber (or :main), if any.
    def run_interrupt(fiber)
      pending = @interrupts[fiber] or return
      action = pending.shift
      @interrupts.delete(fiber) if pending.empty?
      action.call
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
    # settling) or the next timer, at most until deadline. Fibers of this
    # scheduler's run only from the ready list, so that what they do (a
    # thread ending and waking its joiners) is seen before the next turn.
    def run_once(deadline = nil)
      fire_timers
      take_settled
      if @ready.empty?
        timer = next_timer
        wake = timer ? [timer[0], deadline].compact.min : deadline
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
      resumed = false
      ready.each do |fiber, value, n|
        if fiber.is_a?(Integer)
          @results[fiber] = value if @results.key?(fiber)
        elsif fiber.alive? && (n.nil? || @waiting[fiber] == n)
          # (n: the wait it was woken from; a second wake of that wait is dropped)
          fiber.resume(value)
          resumed = true
          collect_if_due
        end
      end
      # (a turn that resumed nothing, as the program's Thread.pass while
      # every thread sleeps: its allocations are looked at too)
      collect_if_due unless resumed
      run_interrupt(:main)
    ensure
      collect_again
    end

    def fire_timers
      t = now
      while (timer = next_timer) && timer[0] <= t
        pop_timer
        timer[4] = true
        @timer_count -= 1
        _, _, fiber, action = timer
        action.is_a?(Exception) ? expire(fiber, action) : wake(fiber, action)
      end
    end

    # A Timeout's time is up: its Expired is raised in fiber (one of this
    # scheduler's: where it waits, as an interrupt).
    def expire(fiber, expired)
      if owns?(fiber)
        interrupt(fiber, -> { raise expired })
      elsif fiber.equal?(Fiber.current)
        raise expired
      elsif fiber.alive?
        fiber.raise(expired)
      end
    end

    # The waits that settled (Bridge#collect, #deferred: lists.settled).
    def take_settled
      s = @bridge.call('takeSettled').to_s
      return if s.empty?
      Lines.read_settled_list(s).each do |settled|
        token = settled.token
        value = NetHttpWasm.settled_value(settled)
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
