# frozen_string_literal: true
#
# The garbage collector and fibers that are switched out.
#
# ruby.wasm switches fibers with Asyncify, which saves the C locals of a
# fiber that is switched out (one that waits for the host, one that waits
# under NetHttpWasm::Scheduler, one that resumed another) in a buffer of its
# own that the collector does not scan. What only such a local holds is
# freed by a collection that runs meanwhile, and the slot is reused: the
# Array that Array#map fills in `urls.map { |u| Net::HTTP.get(u) }` inside
# vm.evalAsync (the program waits for the host inside Array#map), the one
# Array#select fills in Excon's IO.select... (Ruby frames are safe: their
# values are on the VM stack, which is marked, and so are Enumerable's,
# which keep theirs in a memo the VM's frames refer to.)
#
# So while a fiber is switched out, the collector does not run by itself
# (GC.disable, `hold`): a fiber that waits for the host holds it from the
# park to the wake, NetHttpWasm::Scheduler while fibers of its own are
# alive. When the last hold ends it runs by itself again, from the fiber
# that is then current. While holds overlap (fibers of several
# vm.evalAsync calls, a scheduler's threads), it collects where it is
# safe: in the current fiber (whose locals are scanned), once enough has
# been allocated, and only when none of the fibers switched out is inside
# a C method that may hold such objects (their backtraces tell, once per
# wait). A program's own GC.disable is left alone: then nothing collects.
module NetHttpWasm
  module Collector
    # Objects allocated, at least, between two collections of
    # collect_if_due; and the malloc'd bytes that make one due sooner:
    # MALLOC, and FIBER more for each fiber of a scheduler alive, what a
    # fiber holds of malloc'd memory in ruby.wasm (its struct with
    # Asyncify's buffers: Fiber.new 74 KiB and its first resume 49 KiB
    # more, ruby.wasm 2.10's 3.4 and 4.0), which no collection frees while
    # the fiber is alive. (With MALLOC alone, 500 threads started at once
    # made a collection due every 130 threads, each collection marking
    # every fiber's stacks.)
    EVERY = 100_000
    MALLOC = 16 << 20
    FIBER = 128 << 10

    @holds = 0 # holds in force
    @off = false # whether the first hold turned the collector off
    @due = nil # total_allocated_objects at which a collection is due
    @parked = {}.compare_by_identity # fiber => its park (waiting for the host)
    @seq = 0

    class << self
      def hold
        return unless (@holds += 1) == 1

        @off = !GC.disable
        @due = nil
      end

      def release
        return unless (@holds -= 1).zero? && @off

        @off = false
        GC.enable
      end

      # Whether the collector is off by a hold (a program's GC.disable is not).
      def held?
        @off
      end

      # fiber is about to be switched out until the host wakes it.
      def park(fiber)
        hold
        @parked[fiber] = (@seq += 1)
      end

      def unpark(fiber)
        @parked.delete(fiber)
        @parks.forget(fiber)
        release
      end

      # Whether enough has been allocated since the last collection (or
      # since it is held) for one, with `fibers` of a scheduler alive.
      def due?(fibers = 0)
        n = GC.stat(:total_allocated_objects)
        @due ||= n + EVERY
        return true if n >= @due

        GC.stat(:malloc_increase_bytes) >= MALLOC + fibers * FIBER
      end

      # A collection, in the current fiber (the caller knows it safe).
      def collect
        GC.start(full_mark: false)
        @due = GC.stat(:total_allocated_objects) + [GC.stat(:heap_live_slots), EVERY].max
      end

      # After a wake: collects if one is due and safe. Under a busy
      # NetHttpWasm::Scheduler, that scheduler decides (its waiting fibers
      # are switched out too).
      def collect_if_due
        return unless @off

        s = Fiber.scheduler
        return s.collect_if_due if s.is_a?(Scheduler) && s.busy?
        return unless due? && parked_safe?

        collect
      end

      # Whether no fiber waiting for the host, but the current one, is
      # inside a C method that may hold objects in its C locals.
      def parked_safe?
        @parks.safe?
      end
    end

    # Fibers that are switched out, each in a numbered wait (fiber => wait:
    # a Hash its owner keeps), and whether a collection may run meanwhile:
    # only if none of them but the current fiber is inside a C method that
    # may hold objects in its C locals (Frames). Each wait is looked at
    # once; the last one found unsafe is remembered until it ends.
    class SwitchedOut
      def initialize(waits)
        @waits = waits
        @checked = {}.compare_by_identity # fiber => the wait found safe to collect in
        @unsafe = nil # [fiber, wait] last found unsafe to collect in
      end

      # fiber's wait has ended (or fiber has).
      def forget(fiber)
        @checked.delete(fiber)
      end

      def safe?
        f, n = @unsafe
        return false if f && @waits[f] == n

        @unsafe = nil
        current = Fiber.current
        @waits.each do |fiber, wait|
          next if @checked[fiber] == wait || fiber.equal?(current)
          if Frames.holding?(fiber.backtrace_locations)
            @unsafe = [fiber, wait]
            return false
          end
          @checked[fiber] = wait
        end
        true
      end
    end
    @parks = SwitchedOut.new(@parked)

    # The frames of a backtrace that may hold objects where the collector
    # does not look, in a fiber that is switched out: C methods' (Ruby's
    # labels name the method and its owner since 3.4), but for those known
    # to keep nothing there that no Ruby frame refers to (Enumerable's keep
    # their state in a memo the VM's frames refer to; the evals' code is the
    # instruction sequence of the frame they push, which is marked; JS.eval
    # holds only the code it is given; IO::Buffer#transfer calls no Ruby, so
    # no fiber is ever switched out inside it, but Ruby 3.2 and 3.3 name it
    # as Fiber#transfer, "transfer").
    module Frames
      SAFE = %w[
        Kernel#catch Kernel#loop Kernel#tap Kernel#then Kernel#yield_self Kernel#send Kernel#public_send
        Kernel#eval Kernel.eval Binding#eval RubyVM::InstructionSequence#eval JS.eval JS#eval
        Kernel#sleep Kernel.sleep BasicObject#__send__ BasicObject#instance_eval
        BasicObject#instance_exec Module#module_eval Module#class_eval Module#module_exec Module#class_exec
        Class#new Proc#call Proc#() Proc#yield Proc#=== Proc#[] Method#call Method#=== Method#[]
        UnboundMethod#bind_call Integer#times Integer#upto Integer#downto Array#each Array#each_index
        Array#reverse_each Hash#each Hash#each_pair Hash#each_key Hash#each_value Range#each
        Fiber#resume Fiber.yield Fiber#transfer Fiber#raise Fiber#kill Fiber.blocking
        Thread::Mutex#synchronize Thread::Mutex#lock Monitor#synchronize Monitor#mon_synchronize
        Monitor#enter Monitor#mon_enter Thread::Queue#pop Thread::Queue#shift Thread::Queue#deq
        Thread::Queue#push Thread::Queue#<< Thread::Queue#enq Thread::SizedQueue#pop
        Thread::SizedQueue#shift Thread::SizedQueue#deq Thread::SizedQueue#push Thread::SizedQueue#<<
        Thread::SizedQueue#enq Thread.handle_interrupt IO.select Enumerator#each Enumerator#with_index Enumerator#each_with_index
        Enumerator#with_object Enumerator#each_with_object
        Enumerable#map Enumerable#collect Enumerable#flat_map Enumerable#collect_concat Enumerable#select
        Enumerable#filter Enumerable#filter_map Enumerable#reject Enumerable#each_with_index
        Enumerable#each_with_object Enumerable#each_slice Enumerable#each_cons Enumerable#each_entry
        Enumerable#inject Enumerable#reduce Enumerable#sum Enumerable#count Enumerable#find
        Enumerable#detect Enumerable#find_index Enumerable#group_by Enumerable#partition Enumerable#min_by
        Enumerable#max_by Enumerable#minmax_by Enumerable#sort_by Enumerable#to_a Enumerable#entries
        Enumerable#to_h Enumerable#zip Enumerable#first Enumerable#take_while Enumerable#drop_while
        Enumerable#any? Enumerable#all? Enumerable#none? Enumerable#one? Enumerable#tally Enumerable#uniq
        Enumerator::Yielder#yield Thread::Mutex#sleep Process#times IO::Buffer#transfer
      ].to_h { |l| [l, true] }.freeze
      OWNER = /\A([A-Z]\w*(?:::[A-Z]\w*)*)([#.])([^#.]+)\z/

      @verdicts = {} # label => whether such a frame may hold objects

      # Whether a frame of locations may hold objects no Ruby frame refers to.
      def self.holding?(locations)
        locations.each_with_index.any? do |loc, i|
          label = loc.label
          v = @verdicts.fetch(label) { @verdicts[label] = verdict(label) }
          # (a label that names no method: C if it is at its caller's line, as C frames are,
          # then judged by its name)
          v == :unknown ? same_line?(loc, locations[i + 1]) && bare_holding?(label) : v
        end
      end

      def self.same_line?(loc, caller)
        caller.nil? || (loc.lineno == caller.lineno && loc.path == caller.path)
      end

      # true, false, or :unknown (a label of no method: a block's, the
      # program's, a method of an anonymous class, Ruby < 3.4's bare names)
      def self.verdict(label)
        return false if label.start_with?('block ', 'rescue in ', 'ensure in ', '<') || SAFE.key?(label)

        m = method_of(label)
        m ? m.source_location.nil? : :unknown
      end

      @bare = {} # a bare name => whether a C frame of that name may hold objects
      @features = nil

      # A C frame whose label names no class (Ruby < 3.4 labels a method by
      # its name alone: "times") holds nothing only if every C method of
      # that name Ruby has is one of SAFE ("times": Integer#times and
      # Process.times; "each" is also ENV.each, which keeps the pairs it
      # yields in a local). C methods come with what is required: the
      # verdicts are made again once a library has been loaded.
      def self.bare_holding?(name)
        if @features != $LOADED_FEATURES.size
          @bare.clear
          @features = $LOADED_FEATURES.size
        end
        @bare.fetch(name) { @bare[name] = !/\A[^\s#.<]+\z/.match?(name) || !(c_labels(name) - SAFE.keys).empty? }
      end

      # The labels of the C methods called name, as Ruby 3.4 words them
      # (nil for one of an object it cannot name).
      def self.c_labels(name)
        labels = []
        ObjectSpace.each_object(Module) do |m|
          labels << c_label(m, name) if c_method?(m, name)
          # (classes' own are not listed; a singleton class's own would be made here)
          s = m.singleton_class if m.is_a?(Class) && !m.singleton_class?
          labels << c_label(s, name) if s && c_method?(s, name)
        end
        labels
      end

      def self.c_method?(mod, name)
        return false unless mod.method_defined?(name, false) || mod.private_method_defined?(name, false)

        m = mod.instance_method(name)
        m.owner.equal?(mod) && m.source_location.nil?
      end

      def self.c_label(mod, name)
        return mod.name && "#{mod.name}##{name}" unless mod.singleton_class?

        o = mod.attached_object
        return "ENV.#{name}" if o.equal?(ENV)
        return nil unless o.is_a?(Module) && o.name
        # (a module function is the method of the module's instances too)
        o.private_method_defined?(name, false) && c_method?(o, name) ? "#{o.name}##{name}" : "#{o.name}.#{name}"
      rescue StandardError # (a module whose methods answer otherwise)
        nil
      end

      # The method "Owner#name" or "Owner.name" names (not loading anything).
      def self.method_of(label)
        md = OWNER.match(label)
        return nil unless md

        owner = Object
        md[1].split('::').each do |name|
          return nil unless owner.const_defined?(name, false) && !owner.autoload?(name)

          owner = owner.const_get(name, false)
        end
        return nil unless owner.is_a?(Module)

        owner = owner.singleton_class if md[2] == '.'
        m = owner.instance_method(md[3])
        m = m.super_method while m && !m.owner.equal?(owner)
        m
      rescue NameError
        nil
      end
    end
  end
end
