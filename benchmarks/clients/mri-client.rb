# A native MRI client process of the client benchmark:
#   ruby benchmarks/clients/mri-client.rb NAME   (NAME: a key of ClientBench::CLIENTS)
# Commands from run.mjs on stdin, answers on file descriptor 3, as in
# worker.mjs. A run's lanes are threads. TLS trust comes from SSL_CERT_FILE
# (set by run.mjs), which OpenSSL's default paths honour.
require_relative 'clients'

name = ARGV.fetch(0)
out = IO.new(3, 'w')
out.sync = true
clock = ->(id) { Process.clock_gettime(id, :float_millisecond) }

while (line = $stdin.gets)
  cmd = JSON.parse(line)
  begin
    case cmd['op']
    when 'setup'
      modes = ClientBench.setup(name, cmd['url'], cmd['modes'])
      out.puts JSON.generate('modes' => modes, 'version' => ClientBench.version)
    when 'run'
      counts = cmd['counts']
      c0 = clock.(Process::CLOCK_PROCESS_CPUTIME_ID)
      t0 = clock.(Process::CLOCK_MONOTONIC)
      ClientBench.start_run(cmd['expect']['len'], cmd['expect']['sha256'])
      if counts.size == 1
        ClientBench.lane(cmd['mode'], counts[0])
      else
        counts.map { |k| Thread.new { ClientBench.lane(cmd['mode'], k) } }.each(&:join)
      end
      wall = clock.(Process::CLOCK_MONOTONIC) - t0
      cpu = clock.(Process::CLOCK_PROCESS_CPUTIME_ID) - c0
      result = ClientBench.finish_run
      out.puts "#{result[0..-2]},\"wallMs\":#{wall},\"cpuMs\":#{cpu}}"
    end
  rescue StandardError, ScriptError => e
    out.puts JSON.generate('fatal' => "#{e.class}: #{e.message}"[0, 300])
  end
end
