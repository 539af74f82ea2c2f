# frozen_string_literal: true
#
# Compiled Ruby kept from one VM to the next. Parsing and compiling the
# Ruby a VM loads (this package's, net/http and what it requires, a
# program's gems) is much of a fresh VM's setup in ruby.wasm; once started,
# each file `require` loads (RubyVM::InstructionSequence.load_iseq, the hook
# Ruby calls before it compiles a file) and this package's own Ruby is
# compiled once, kept in its binary form (InstructionSequence#to_binary) by
# the host, and loaded from it by every later VM: of this process, and of
# later ones where the host keeps it in a folder (createRubyVM's
# compileCache). The host finds it by a digest of the key: the VM's Ruby
# (RUBY_DESCRIPTION), its compile options, the file's path and its bytes.
# Nothing is kept while Coverage runs (its counters are made by compiling),
# nor, in Ruby 3.4, the files `require` loads (below).

module NetHttpWasm
  class << self
    # The address of a String's bytes in the VM's linear memory.
    # (a Float past 2**30: a wasm32 Fixnum is 31 bits, and JS::Object#call
    # takes no Bignum; a memory that has grown past 1 GiB has such addresses)
    def addr(str)
      a = [str].pack('p').unpack1('J')
      a > 0x3fffffff ? a.to_f : a
    end
  end

  module CompileCache
    # Ruby's hook: the instruction sequence of the file at path, or nil (Ruby
    # compiles it as usual).
    module LoadIseq
      def load_iseq(path)
        CompileCache.file(path) || (defined?(super) ? super : nil)
      end
    end

    class << self
      # From now on, compiled Ruby is kept through bridge (its calls
      # compiled, compiledCopy and keepCompiled).
      def start(bridge)
        @bridge = bridge
        @prefix = "#{RUBY_DESCRIPTION}\0#{RubyVM::InstructionSequence.compile_option.inspect}\0".b
        # (not Ruby 3.4's files: in ruby.wasm's 3.4.1 a collection after
        # any load_iseq hook, even one that only calls compile_file, marked a
        # freed object: `require 'httparty'` inside vm.evalAsync crashed the VM)
        RubyVM::InstructionSequence.singleton_class.prepend(LoadIseq) unless RUBY_VERSION.start_with?('3.4.')
        nil
      end

      def keeping?
        !@bridge.nil? && !(defined?(::Coverage) && ::Coverage.running?)
      end

      # The file's instruction sequence, or nil: Ruby then compiles it itself
      # (and raises its SyntaxError).
      def file(path)
        return nil unless keeping?

        iseq(File.binread(path), path) { RubyVM::InstructionSequence.compile_file(path) }
      rescue ScriptError, StandardError
        nil
      end

      # This package's Ruby (src, named name) run at the top level, as
      # TOPLEVEL_BINDING.eval(src, name) runs it.
      def eval_source(src, name)
        return TOPLEVEL_BINDING.eval(src, name) unless keeping?

        iseq(src, name) { RubyVM::InstructionSequence.compile(src, name) }.eval
        nil
      end

      private

      def iseq(src, path)
        key = @prefix + path.b + "\0".b + src.b
        n = @bridge.call('compiled', NetHttpWasm.addr(key), key.bytesize).to_i
        if n > 0
          bin = "\0".b * n
          @bridge.call('compiledCopy', NetHttpWasm.addr(bin))
          begin
            return RubyVM::InstructionSequence.load_from_binary(bin)
          rescue StandardError
            # (not this Ruby's after all: compiled again and kept anew)
          end
        end
        iseq = yield
        begin
          bin = iseq.to_binary
          @bridge.call('keepCompiled', NetHttpWasm.addr(bin), bin.bytesize)
        rescue StandardError
          # (an instruction sequence that has no binary form is not kept)
        end
        iseq
      end
    end
  end
end
