# frozen_string_literal: true
#
# Thread in ruby.wasm, which has none (Thread.new raises NotImplementedError
# there): each thread is a non-blocking fiber of NetHttpWasm::Scheduler
# (scheduler.rb), so that MRI-style threaded programs run unchanged:
#
#   bodies = urls.map { |u| Thread.new { Net::HTTP.get(URI(u)) } }.map(&:value)
#
# A thread runs until it waits where an MRI thread would wait (a
# connection, a response, sleep, Queue#pop, Mutex#lock, ConditionVariable
# #wait, Monitor, Thread#join, Thread.pass, Timeout.timeout's timer); then
# the others run. A thread that computes without waiting keeps the VM until
# it waits: there is one machine thread, and a fiber cannot be stopped from
# outside. The program itself (vm.eval, vm.evalAsync) is Thread.main; a
# new thread starts when the program (or another thread) next waits.
#
# Ruby's own Mutex, Queue and SizedQueue call the scheduler's block and
# unblock in a non-blocking fiber (the threads, and vm.evalAsync's code);
# vm.eval's code runs in the VM's root fiber, which is blocking, so there
# waits that other threads must end run the scheduler until they can go on
# (Blocking below). ConditionVariable is replaced (Ruby's sleeps in a way
# that only a thread of its own could end).
#
# Where the VM differs from MRI: threads' fiber-local variables ([]) belong
# to the thread, not to each fiber it makes; an exception raised into
# another thread (Thread#raise, abort_on_exception, Timeout) arrives when it
# next waits; a thread's class is NetHttpWasm::Thread (Thread === t,
# t.is_a?(Thread) hold); threads left alive when an eval returns go on in
# the next one's waits (the VM lives on; MRI's would end with the program).

module NetHttpWasm
  class Thread
    STORAGE_KEY = :__net_http_wasm_thread__
    MAIN = ::Thread.main

    @list = [] # live threads, in the order they were made
    @lock = nil

    class << self
      attr_reader :list

      # The scheduler threads run on (made and set when there is none).
      def scheduler
        s = Fiber.scheduler
        return s if s.is_a?(Scheduler)
        raise ::ThreadError, "net-http-wasm: threads need NetHttpWasm::Scheduler, and #{s.class} is the fiber scheduler" if s

        Fiber.set_scheduler(Scheduler.new)
        Fiber.scheduler
      end

      # The scheduler, when fibers of its own are alive (else nil).
      def busy_scheduler
        s = Fiber.scheduler
        s if s.is_a?(Scheduler) && s.busy?
      end

      def now
        Process.clock_gettime(Process::CLOCK_MONOTONIC)
      end

      # Waits until flag[1] is set (wake), or until deadline: whether it
      # was set. flag[0] is the fiber that waits.
      def wait_flag(flag, deadline)
        s = scheduler
        until flag[1]
          left = deadline && deadline - now
          return false if left && left <= 0

          if s.owns?(Fiber.current)
            s.block(flag, left)
          else
            s.poll(deadline)
          end
        end
        true
      end

      def wake(flag)
        flag[1] = true
        s = Fiber.scheduler
        s.unblock(flag, flag[0]) if s.is_a?(Scheduler) && s.owns?(flag[0])
        nil
      end

      # The exception Kernel#raise would raise for these arguments.
      def exception_for(args)
        return ::RuntimeError.new('unhandled exception') if args.empty?

        first, message, backtrace = args
        raise ::TypeError, 'exception class/object expected' if args.size > 3

        e = if first.is_a?(::String)
              raise ::TypeError, 'exception class/object expected' if args.size > 1

              ::RuntimeError.new(first)
            elsif first.respond_to?(:exception)
              args.size > 1 ? first.exception(message) : first.exception
            else
              raise ::TypeError, 'exception class/object expected'
            end
        raise ::TypeError, 'exception object expected' unless e.is_a?(::Exception)

        e.set_backtrace(backtrace) if backtrace
        e
      end
    end

    def initialize(args, block, from)
      ::Kernel.raise ::ThreadError, 'must be called with a block' unless block

      @block = block
      @from = from # "file:line" of the block, as inspect shows it
      @status = 'run'
      @value = nil
      @exception = nil
      @joiners = []
      @locals = {}
      @variables = {}
      @name = nil
      @report_on_exception = ::Thread.report_on_exception
      @abort_on_exception = false
      @group = ThreadGroup::Default
      @priority = 0
      @sleeping = nil # the flag of Kernel#sleep it is in
      @kill = Object.new # thrown to end the thread
      @started = false
      @scheduler = self.class.scheduler
      storage = (Fiber.current.storage || {}).merge(STORAGE_KEY => self)
      @fiber = @scheduler.spawn(storage) { body(args) }
      self.class.list << self
    end

    attr_reader :fiber # :nodoc:

    # -- state --

    def alive?
      @status.is_a?(::String)
    end

    # "run" (running or ready to), "sleep" (waiting), false (ended), nil
    # (ended by an exception).
    def status
      return @status unless alive?
      return 'run' if equal?(::Thread.current)

      @scheduler.waiting?(@fiber) ? 'sleep' : 'run'
    end

    def stop?
      !alive? || status == 'sleep'
    end

    def join(limit = nil)
      ::Kernel.raise ::ThreadError, 'Target thread must not be current thread' if equal?(::Thread.current)

      deadline = limit && self.class.now + limit
      if alive?
        flag = [Fiber.current, false]
        @joiners << flag
        begin
          return nil unless self.class.wait_flag(flag, deadline)
        ensure
          @joiners.delete(flag)
        end
      end
      ::Kernel.raise @exception if @exception

      self
    end

    def value
      join
      @value
    end

    # -- ending and interrupting it --

    def kill
      return self unless alive?

      if equal?(::Thread.current)
        throw @kill
      elsif !@started
        @status = false
        finish
      else
        kill = @kill
        @scheduler.interrupt(@fiber, -> { throw kill })
      end
      self
    end
    alias exit kill
    alias terminate kill

    def raise(*args)
      return nil unless alive?

      e = self.class.exception_for(args)
      return ::Kernel.raise(e) if equal?(::Thread.current)

      @scheduler.interrupt(@fiber, -> { ::Kernel.raise(e) })
      nil
    end

    def wakeup
      ::Kernel.raise ::ThreadError, 'killed thread' unless alive?

      self.class.wake(@sleeping) if @sleeping
      self
    end

    def run
      wakeup
      ::Thread.pass
      self
    end

    # -- variables --

    def [](key)
      @locals[local_key(key)]
    end

    def []=(key, value)
      k = local_key(key)
      value.nil? ? @locals.delete(k) : @locals[k] = value
    end

    def key?(key)
      @locals.key?(local_key(key))
    end

    def keys
      @locals.keys
    end

    def fetch(key, *default)
      ::Kernel.raise ::ArgumentError, "wrong number of arguments (given #{default.size + 1}, expected 1..2)" if default.size > 1

      k = local_key(key)
      return @locals[k] if @locals.key?(k)
      return yield(key) if block_given?
      return default[0] unless default.empty?

      ::Kernel.raise ::KeyError.new("key not found: #{k.inspect}", receiver: self, key: k)
    end

    def thread_variable_get(key)
      @variables[local_key(key)]
    end

    def thread_variable_set(key, value)
      k = local_key(key)
      value.nil? ? @variables.delete(k) : @variables[k] = value
    end

    def thread_variable?(key)
      @variables.key?(local_key(key))
    end

    def thread_variables
      @variables.keys
    end

    # -- attributes --

    attr_reader :name, :priority, :group
    attr_accessor :report_on_exception, :abort_on_exception

    def name=(name)
      @name = name.nil? ? nil : String(name).dup.freeze
    end

    def priority=(n)
      @priority = n.to_int.clamp(-3, 3)
    end

    def group=(group) # :nodoc: (ThreadGroup#add)
      @group = group
    end

    def backtrace(*)
      alive? ? [] : nil
    end

    def backtrace_locations(*)
      alive? ? [] : nil
    end

    def pending_interrupt?(*)
      false
    end

    def native_thread_id
      nil
    end

    def inspect
      addr = ::Kernel.instance_method(:to_s).bind_call(self)[/0x\h+/]
      s = +"#<Thread:#{addr}"
      s << "@#{@name}" if @name
      s << " #{@from}" if @from
      s << " #{alive? ? status : 'dead'}>"
    end
    alias to_s inspect

    def is_a?(klass)
      klass.equal?(::Thread) || super
    end
    alias kind_of? is_a?

    def instance_of?(klass)
      klass.equal?(::Thread) || super
    end

    # Kernel#sleep in this thread (Thread#wakeup ends it).
    def sleep_here(duration) # :nodoc:
      flag = [Fiber.current, false]
      @sleeping = flag
      begin
        self.class.wait_flag(flag, duration && self.class.now + duration)
      ensure
        @sleeping = nil
      end
    end

    private

    def local_key(key)
      case key
      when ::Symbol then key
      when ::String then key.to_sym
      else ::Kernel.raise ::TypeError, "#{key.inspect} is not a symbol nor a string"
      end
    end

    # The fiber's work.
    def body(args)
      @started = true
      return unless alive? # killed before it started

      catch(@kill) do
        @value = @block.call(*args)
        @status = false
      rescue ::Exception => e # rubocop:disable Lint/RescueException
        report(e)
        @exception = e
        @status = nil
      end
    ensure
      @status = false if alive? # (killed)
      finish
    end

    def report(e)
      if @report_on_exception
        $stderr.write("#{inspect} terminated with exception (report_on_exception is true):\n#{e.full_message(highlight: false)}")
      end
      return unless @abort_on_exception || ::Thread.abort_on_exception

      @scheduler.interrupt(:main, -> { ::Kernel.raise e })
    end

    def finish
      @block = nil
      self.class.list.delete(self)
      @joiners.each { |flag| self.class.wake(flag) }
    end
  end

  # Waits in the VM's root fiber (vm.eval's code), which is blocking: Ruby's
  # Queue, Mutex and Monitor do not call the scheduler there and would find
  # a deadlock. While threads are alive, such a wait runs the scheduler until
  # it can go on.
  module Blocking
    def self.scheduler
      Fiber.current.blocking? && Thread.busy_scheduler
    end

    def self.now
      Process.clock_gettime(Process::CLOCK_MONOTONIC)
    end

    # Runs the scheduler until the block gives true (or deadline: false).
    def self.until(s, deadline)
      until yield
        return false if deadline && now >= deadline

        s.poll(deadline)
      end
      true
    end

    module QueueWaits
      def pop(non_block = false, timeout: nil)
        s = !non_block && Blocking.scheduler
        return super unless s

        value = nil
        got = Blocking.until(s, timeout && Blocking.now + timeout) do
          if empty?
            closed?.tap { |c| value = nil if c }
          else
            value = super(true)
            true
          end
        end
        got ? value : nil
      end
      alias_method :shift, :pop
      alias_method :deq, :pop
    end

    module SizedQueueWaits
      def push(object, non_block = false, timeout: nil)
        s = !non_block && Blocking.scheduler
        return super unless s

        pushed = Blocking.until(s, timeout && Blocking.now + timeout) do
          raise ClosedQueueError, 'queue closed' if closed?

          size < max ? (super(object, true); true) : false
        end
        pushed ? self : nil
      end
      alias_method :<<, :push
      alias_method :enq, :push
    end

    module MutexWaits
      def lock
        s = Blocking.scheduler
        return super unless s && !owned?

        Blocking.until(s, nil) { try_lock }
        self
      end

      # Ruby's own synchronize is a C method that runs its block under
      # rb_ensure: a setjmp, which ruby.wasm makes by unwinding and
      # rewinding the whole C stack, and a `return` from the block is a
      # longjmp through it. The same steps in Ruby (lock, yield, unlock in
      # an ensure, which raises as Ruby's does if the block left the mutex
      # unlocked) cost neither.
      def synchronize
        return super unless block_given?

        lock
        begin
          yield
        ensure
          unlock
        end
      end
    end

    module MonitorWaits
      def enter
        s = Blocking.scheduler
        return super unless s && !mon_owned?

        Blocking.until(s, nil) { try_enter }
        nil
      end
      alias_method :mon_enter, :enter

      # (as Mutex#synchronize above: Monitor's is a C method under rb_ensure)
      def synchronize
        return super unless block_given?

        enter
        begin
          yield
        ensure
          exit
        end
      end
      alias_method :mon_synchronize, :synchronize
    end
  end

  # ConditionVariable on the scheduler, in every fiber.
  module ConditionWaits
    def wait(mutex, timeout = nil)
      waiters = (@__nhw_waiters ||= [])
      flag = [Fiber.current, false]
      waiters << flag
      began = Thread.now
      mutex.unlock
      begin
        signalled = Thread.wait_flag(flag, timeout && began + timeout)
      ensure
        waiters.delete_if { |f| f.equal?(flag) }
        mutex.lock
      end
      signalled ? (Thread.now - began).round : nil
    end

    def signal
      flag = @__nhw_waiters&.shift
      Thread.wake(flag) if flag
      self
    end

    def broadcast
      flags = @__nhw_waiters
      @__nhw_waiters = []
      flags&.each { |flag| Thread.wake(flag) }
      self
    end
  end
end

class Thread
  class << self
    prepend(Module.new do
      def new(*args, &block)
        NetHttpWasm::Thread.new(args, block, block && block.source_location&.join(':'))
      end
      alias_method :start, :new
      alias_method :fork, :new

      def current
        Fiber[NetHttpWasm::Thread::STORAGE_KEY] || super
      end

      def list
        super + NetHttpWasm::Thread.list
      end

      def pass
        s = Fiber.scheduler
        s.is_a?(NetHttpWasm::Scheduler) ? s.pass : super
      end

      def stop
        sleep
        nil
      end

      def exit
        current.equal?(NetHttpWasm::Thread::MAIN) ? super : current.kill
      end

      def kill(thread)
        thread.kill
      end

      def ===(other)
        other.is_a?(NetHttpWasm::Thread) || super
      end
    end)
  end

  # Thread.main, while another thread runs.
  prepend(Module.new do
    def raise(*args)
      return super if equal?(::Thread.current) || !Fiber.scheduler.is_a?(NetHttpWasm::Scheduler)

      e = NetHttpWasm::Thread.exception_for(args)
      Fiber.scheduler.interrupt(:main, -> { Kernel.raise e })
      nil
    end

    def status
      equal?(::Thread.current) ? super : 'sleep'
    end

    def join(*)
      ::Kernel.raise ::ThreadError, 'Target thread must not be main thread' unless equal?(::Thread.current)

      super
    end
  end)
end

class ThreadGroup
  prepend(Module.new do
    def add(thread)
      return super unless thread.is_a?(NetHttpWasm::Thread)

      thread.group = self
      self
    end

    def list
      super + NetHttpWasm::Thread.list.select { |t| t.group.equal?(self) }
    end
  end)
end

module Kernel
  prepend(Module.new do
    private

    # In a thread: Thread#wakeup ends it; in vm.eval's code while threads
    # are alive: the scheduler runs meanwhile.
    def sleep(*args)
      t = ::Thread.current
      blocking = !t.is_a?(NetHttpWasm::Thread) && NetHttpWasm::Blocking.scheduler
      return super unless t.is_a?(NetHttpWasm::Thread) || blocking

      ::Kernel.raise ::ArgumentError, "wrong number of arguments (given #{args.size}, expected 0..1)" if args.size > 1
      d = args[0]
      ::Kernel.raise ::TypeError, "can't convert #{d.class} into time interval" unless d.nil? || d.is_a?(::Numeric)
      ::Kernel.raise ::ArgumentError, 'time interval must not be negative' if d&.negative?

      began = NetHttpWasm::Thread.now
      if blocking
        deadline = d && began + d
        NetHttpWasm::Blocking.until(blocking, deadline) { false }
      else
        t.sleep_here(d)
      end
      (NetHttpWasm::Thread.now - began).round
    end
  end)
end

# IO.select with no IO to watch, in vm.eval's code while threads are alive:
# a sleep (as the scheduler's io_select is in a non-blocking fiber).
class IO
  class << self
    prepend(Module.new do
      def select(readables, writables = nil, exceptables = nil, timeout = nil)
        return super unless NetHttpWasm::Blocking.scheduler && [readables, writables, exceptables].all? { |a| a.nil? || a.empty? }

        timeout.nil? ? sleep : sleep(timeout)
        nil
      end
    end)
  end
end

module Kernel
  class << self
    prepend(Module.new do
      def sleep(*args)
        Object.new.send(:sleep, *args)
      end
    end)
  end
end

# Timeout.timeout in vm.eval's code: the scheduler's timer (as in a
# non-blocking fiber) rather than a thread of Timeout's that would live on.
require 'timeout'
module Timeout
  class << self
    prepend(Module.new do
      def timeout(sec, klass = nil, message = nil, &block)
        return super unless sec && !sec.zero? && Fiber.current.blocking?

        NetHttpWasm::Thread.scheduler.timeout_after(sec, klass || Timeout::Error, message || 'execution expired', &block)
      end
    end)
  end
end

Thread::Queue.prepend(NetHttpWasm::Blocking::QueueWaits)
Thread::SizedQueue.prepend(NetHttpWasm::Blocking::QueueWaits, NetHttpWasm::Blocking::SizedQueueWaits)
Thread::Mutex.prepend(NetHttpWasm::Blocking::MutexWaits)
Thread::ConditionVariable.prepend(NetHttpWasm::ConditionWaits)
begin
  require 'monitor'
  Monitor.prepend(NetHttpWasm::Blocking::MonitorWaits)
rescue LoadError
  nil
end

# 4.0's writes in a non-blocking fiber under a scheduler make an IO::Buffer,
# whose first use warns that it is experimental: that warning, once, unseen.
if defined?(IO::Buffer)
  begin
    experimental = Warning[:experimental]
    Warning[:experimental] = false
    IO::Buffer.new(1)
  ensure
    Warning[:experimental] = experimental
  end
end
