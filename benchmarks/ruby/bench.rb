# The benchmark's Ruby side: MRI's own net/http and uri doing each operation.
# Reads the inputs (JSON) and options from $bench_args (ruby.wasm) or ARGV
# (native): inputs.json, comma-separated ops, passes, minimum ns per pass,
# mode ("gate": print each output's base64 once; "time": print timings).
require 'net/http'
require 'uri'
require 'json'
require 'stringio'

args = defined?($bench_args) ? $bench_args : ARGV
INPUT = JSON.parse(File.read(args[0]))
OPS = args[1].split(',')
PASSES = Integer(args[2])
MIN_NS = Integer(args[3])
MODE = args[4]

class HeaderBag
  include Net::HTTPHeader
  def initialize
    initialize_http_header(nil)
  end
end

req_in = INPUT['request']
form = req_in['form'].to_h
response = INPUT['response'].b
big = INPUT['bigResponse'].b
pairs = INPUT['formPairs']
form_string = INPUT['formString']
fields = INPUT['fields']

def parse_response(bytes)
  sock = Net::BufferedIO.new(StringIO.new(bytes))
  res = Net::HTTPResponse.read_new(sock)
  res.reading_body(sock, true) {}
  res
end

def canonical_response(res)
  out = +"#{res.code}\n#{res.message}\n"
  res.to_hash.each { |k, v| out << k << ': ' << v.join("\0") << "\n" }
  out << "\n" << res.body
  out.b
end

WORK = {
  'request' => lambda {
    req = Net::HTTP::Post.new(URI(req_in['uri']))
    req[req_in['header'][0]] = req_in['header'][1]
    req.set_form_data(form)
    io = StringIO.new(+''.b)
    req.exec(Net::BufferedIO.new(io), '1.1', req.path)
    io.string
  },
  'response' => lambda { canonical_response(parse_response(response)) },
  'formEncode' => lambda { URI.encode_www_form(pairs) },
  'formDecode' => lambda { URI.decode_www_form(form_string).map { |k, v| "#{k}\0#{v}\n" }.join },
  'canonicalize' => lambda {
    h = HeaderBag.new
    fields.each { |k, v| h.add_field(k, v) }
    out = +''
    h.each_capitalized { |k, v| out << k << ': ' << v << "\r\n" }
    out
  },
  'incremental' => lambda { canonical_response(parse_response(big)) },
}

$stdout.sync = true
OPS.each do |op|
  work = WORK.fetch(op)
  if MODE == 'gate'
    puts "#{op} #{[work.call.b].pack('m0')}"
    next
  end
  # calibrate an inner loop that takes at least MIN_NS
  iters = 1
  loop do
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    iters.times { work.call }
    dt = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0
    break if dt >= MIN_NS || iters >= 1 << 24
    iters *= 2
  end
  samples = []
  PASSES.times do
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond)
    iters.times { work.call }
    samples << (Process.clock_gettime(Process::CLOCK_MONOTONIC, :nanosecond) - t0).fdiv(iters)
  end
  puts "#{op} #{samples.map { |s| s.round(1) }.join(',')}"
end
